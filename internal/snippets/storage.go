package snippets

import (
	"context"

	"quarry/internal/model"
)

// newStorage is the storage a new snippet's repository goes on. Every
// new snippet takes "default" for now; st carries the instance's
// repository_storages_weighted for a weighted pick.
func (s *Service) newStorage(_ context.Context, _ model.ApplicationSettings) string {
	return "default"
}
