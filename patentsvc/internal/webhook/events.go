package webhook

import (
	"fmt"
	"strconv"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// JobEvent is the job.completed notification of a batch job that ended
// (completed or failed). Its data is thin: ids and counts, not results.
func JobEvent(j patent.Job) Event {
	data := map[string]any{
		"job_id": j.ID, "status": j.Status, "total": j.Total, "completed": j.Completed,
		"model": j.Model, "error": j.Error,
	}
	successful, failed := 0, 0
	if j.Result != nil {
		successful, failed = j.Result.Summary.Successful, j.Result.Summary.Failed
		data["summary"] = map[string]any{
			"successful": successful, "failed": failed, "total_patents": j.Result.Summary.TotalPatents,
			"duration_seconds": j.Result.Summary.DurationSeconds,
		}
	}
	summary := fmt.Sprintf("Patent analysis job %s %s: %d of %d companies analysed", j.ID, j.Status, successful, j.Total)
	fields := []Field{{Label: "Job", Value: j.ID}, {Label: "Status", Value: j.Status},
		{Label: "Companies", Value: strconv.Itoa(j.Total)}, {Label: "Successful", Value: strconv.Itoa(successful)},
		{Label: "Failed", Value: strconv.Itoa(failed)}, {Label: "Model", Value: j.Model}}
	if j.Error != nil {
		fields = append(fields, Field{Label: "Error", Value: *j.Error})
	}
	return Event{Type: EventJobCompleted, Timestamp: time.Now().UTC(), Data: data, Summary: summary, Fields: fields}
}

// AlertEvent is the notification of a stored alert:
// alert.patent_count_change, or alert.new_patents for a new_patents alert
// (its data carries the patents; Slack lists the first slackMaxLinks,
// linked to their PDFs).
func AlertEvent(a patent.Alert) Event {
	patents := make([]map[string]any, len(a.Patents))
	for i, p := range a.Patents {
		patents[i] = map[string]any{"patent_id": p.PatentID, "title": p.Title, "publication_date": p.PublicationDate, "pdf_link": p.PDFLink}
	}
	e := Event{
		Type:      EventAlert,
		Timestamp: time.Now().UTC(),
		Data: map[string]any{
			"alert_id": a.ID, "company_name": a.CompanyName, "alert_type": a.AlertType, "message": a.Message,
			"old_value": a.OldValue, "new_value": a.NewValue, "created_at": a.CreatedAt, "patents": patents,
		},
		Summary: a.Message,
		Fields: []Field{{Label: "Company", Value: a.CompanyName},
			{Label: "Previous count", Value: strconv.FormatFloat(a.OldValue, 'f', -1, 64)},
			{Label: "New count", Value: strconv.FormatFloat(a.NewValue, 'f', -1, 64)}},
	}
	if a.AlertType != patent.AlertTypeNewPatents {
		return e
	}
	e.Type = EventNewPatents
	e.Fields = []Field{{Label: "Company", Value: a.CompanyName},
		{Label: "New patents", Value: strconv.FormatFloat(a.NewValue, 'f', -1, 64)},
		{Label: "Previous count", Value: strconv.FormatFloat(a.OldValue, 'f', -1, 64)}}
	for _, p := range a.Patents[:min(len(a.Patents), slackMaxLinks)] {
		note := p.Title
		if p.PublicationDate != "" {
			note += " (" + p.PublicationDate + ")"
		}
		e.Links = append(e.Links, Link{Text: p.PatentID, URL: p.PDFLink, Note: note})
	}
	return e
}
