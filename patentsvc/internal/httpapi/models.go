package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type modelJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Provider string `json:"provider"`
}

// handleModels serves GET /models: the allow-list and the default. It
// needs no token.
func handleModels(def string) echo.HandlerFunc {
	return func(c echo.Context) error {
		models := mapSlice(patent.Models(), func(m patent.Model) modelJSON {
			return modelJSON{ID: m.ID, Name: m.Name, Provider: m.Provider}
		})
		return c.JSON(http.StatusOK, struct {
			Models  []modelJSON `json:"models"`
			Default string      `json:"default"`
		}{models, def})
	}
}
