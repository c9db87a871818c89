package analysis_test

import (
	"os"
	"path/filepath"

	"github.com/gatewayapis/patentsvc/internal/analysis/analysistest"
	"github.com/gatewayapis/patentsvc/internal/pdfstore"
)

// removeStored deletes a patent's PDF from the local storage.
func removeStored(w *analysistest.World, id string) error {
	key, err := pdfstore.Key(id)
	if err != nil {
		return err
	}
	return os.Remove(filepath.Join(w.Blobs.Dir(), filepath.FromSlash(key)))
}
