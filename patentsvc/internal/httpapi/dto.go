package httpapi

import (
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type userJSON struct {
	ID        int64     `json:"id"`
	Email     string    `json:"email"`
	Role      string    `json:"role"`
	CreatedAt time.Time `json:"created_at"`
}

func fromUser(u patent.User) userJSON {
	return userJSON{ID: u.ID, Email: u.Email, Role: string(u.Role), CreatedAt: u.CreatedAt}
}

type trackedJSON struct {
	ID              int64      `json:"id"`
	CompanyName     string     `json:"company_name"`
	LastPatentCount int        `json:"last_patent_count"`
	LastAnalysisAt  *time.Time `json:"last_analysis_at"`
	CreatedAt       time.Time  `json:"created_at"`
}

func fromTracked(t patent.TrackedCompany) trackedJSON {
	return trackedJSON{ID: t.ID, CompanyName: t.CompanyName, LastPatentCount: t.LastPatentCount,
		LastAnalysisAt: t.LastAnalysisAt, CreatedAt: t.CreatedAt}
}

type alertJSON struct {
	ID          int64     `json:"id"`
	CompanyName string    `json:"company_name"`
	AlertType   string    `json:"alert_type"`
	Message     string    `json:"message"`
	OldValue    float64   `json:"old_value"`
	NewValue    float64   `json:"new_value"`
	CreatedAt   time.Time `json:"created_at"`
}

func fromAlert(a patent.Alert) alertJSON {
	return alertJSON{ID: a.ID, CompanyName: a.CompanyName, AlertType: a.AlertType, Message: a.Message,
		OldValue: a.OldValue, NewValue: a.NewValue, CreatedAt: a.CreatedAt}
}

type messageJSON struct {
	Message string `json:"message"`
}

// mapSlice converts a slice of domain values to their wire form, never nil
// (an empty list is [] on the wire, not null).
func mapSlice[T, U any](in []T, f func(T) U) []U {
	out := make([]U, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
