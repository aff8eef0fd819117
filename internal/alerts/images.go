package alerts

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/uploads"
)

// Limits of a metric image (GitLab's).
const (
	MaxMetricImages = 100
	MaxImageURL     = 255
	MaxImageURLText = 128
)

// imageExts are the file types a metric image may be (GitLab's safe
// image extensions).
var imageExts = []string{"png", "jpg", "jpeg", "gif", "bmp", "tiff", "ico", "webp"}

// ImageInput are a metric image's link attributes; nil means "not given".
type ImageInput struct {
	URL, URLText *string
}

func (in ImageInput) validate() error {
	if in.URL != nil && *in.URL != "" {
		u, err := url.Parse(*in.URL)
		switch {
		case len(*in.URL) > MaxImageURL:
			return model.BadRequestRaw("Url is too long (maximum is 255 characters)")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return model.BadRequestRaw("Url is blocked: Only allowed schemes are http, https")
		}
	}
	if in.URLText != nil && len([]rune(*in.URLText)) > MaxImageURLText {
		return model.BadRequestRaw("Url text is too long (maximum is 128 characters)")
	}
	return nil
}

// alertFor resolves a project and one of its alerts for action: an
// alert the caller may not act on, or none, is 403 (GitLab's authorize!
// on what its finder returned).
func (s *Service) alertFor(ctx context.Context, a auth.Actor, ref string, iid int64, action auth.Action) (model.Alert, error) {
	p, acc, err := s.projects.Resolve(ctx, a, ref)
	if err != nil {
		return model.Alert{}, err
	}
	al, err := s.db.AlertByIID(ctx, p.ID, iid)
	if errors.Is(err, model.ErrNotFound) || (err == nil && !auth.Can(a, action, auth.Resource{Project: &p, Access: acc})) {
		if action == auth.ReadAlert {
			return al, model.NotFoundRaw("Alert not found")
		}
		return al, model.Forbidden("")
	}
	return al, err
}

// MetricImages lists an alert's images, oldest first.
func (s *Service) MetricImages(ctx context.Context, a auth.Actor, ref string, iid int64) ([]model.AlertMetricImage, error) {
	al, err := s.alertFor(ctx, a, ref, iid, auth.ReadAlert)
	if err != nil {
		return nil, err
	}
	return s.db.AlertMetricImages(ctx, al.ID, MaxMetricImages)
}

// AddMetricImage stores an image file (an image type, within the
// instance's attachment limit) with an optional link.
func (s *Service) AddMetricImage(ctx context.Context, a auth.Actor, ref string, iid int64, f *uploads.File, in ImageInput) (model.AlertMetricImage, error) {
	al, err := s.alertFor(ctx, a, ref, iid, auth.UpdateAlert)
	if err != nil {
		return model.AlertMetricImage{}, err
	}
	if err := in.validate(); err != nil {
		return model.AlertMetricImage{}, err
	}
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(f.Name)), ".")
	ok := false
	for _, e := range imageExts {
		ok = ok || e == ext
	}
	if !ok {
		return model.AlertMetricImage{}, model.BadRequestRaw("File does not have a valid extension (allowed: " + strings.Join(imageExts, ", ") + ")")
	}
	if s.settings != nil {
		st, err := s.settings.Current(ctx)
		if err != nil {
			return model.AlertMetricImage{}, err
		}
		if max := st.MaxAttachmentSize << 20; max > 0 && f.Size > max {
			return model.AlertMetricImage{}, model.BadRequestRaw("File is too large")
		}
	}
	m := model.AlertMetricImage{AlertID: al.ID, Filename: strings.TrimSuffix(uploads.SafeName(f.Name), path.Ext(f.Name))}
	if in.URL != nil {
		m.URL = *in.URL
	}
	if in.URLText != nil {
		m.URLText = *in.URLText
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountAlertMetricImages(ctx, al.ID)
		if err != nil {
			return err
		}
		if n >= MaxMetricImages {
			return model.BadRequestRaw("An alert has at most 100 metric images")
		}
		return tx.CreateAlertMetricImage(ctx, &m)
	})
	if err != nil {
		return m, err
	}
	// The folder holds a secret: uploads are served to whoever has the
	// path, and the alert may be a private project's.
	rel, err := s.files.Save("alert_metric_image/file/"+strconv.FormatInt(m.ID, 10)+"/"+randomHex(16), f)
	if err == nil {
		m.FilePath = rel
		err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.SetAlertMetricImagePath(ctx, m.ID, rel) })
	}
	if err != nil {
		_ = s.files.Remove(rel)
		_ = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteAlertMetricImage(ctx, al.ID, m.ID) })
		return m, err
	}
	return m, nil
}

// UpdateMetricImage changes an image's link.
func (s *Service) UpdateMetricImage(ctx context.Context, a auth.Actor, ref string, iid, id int64, in ImageInput) (model.AlertMetricImage, error) {
	al, err := s.alertFor(ctx, a, ref, iid, auth.UpdateAlert)
	if err != nil {
		return model.AlertMetricImage{}, err
	}
	if err := in.validate(); err != nil {
		return model.AlertMetricImage{}, model.Unprocessable("Metric image could not be updated")
	}
	var m model.AlertMetricImage
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if m, err = tx.AlertMetricImage(ctx, al.ID, id); err != nil {
			return err
		}
		if in.URL != nil {
			m.URL = *in.URL
		}
		if in.URLText != nil {
			m.URLText = *in.URLText
		}
		return tx.UpdateAlertMetricImage(ctx, &m)
	})
	if errors.Is(err, model.ErrNotFound) {
		return m, model.NotFoundRaw("Metric image not found")
	}
	return m, err
}

// DeleteMetricImage removes an image and its file.
func (s *Service) DeleteMetricImage(ctx context.Context, a auth.Actor, ref string, iid, id int64) error {
	al, err := s.alertFor(ctx, a, ref, iid, auth.UpdateAlert)
	if err != nil {
		return err
	}
	var m model.AlertMetricImage
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if m, err = tx.AlertMetricImage(ctx, al.ID, id); err != nil {
			return err
		}
		return tx.DeleteAlertMetricImage(ctx, al.ID, id)
	})
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFoundRaw("Metric image not found")
	}
	if err != nil {
		return err
	}
	return s.files.Remove(m.FilePath)
}

// RemoveProjectImages removes the files of a project's metric images (the
// project is being removed; its rows go with it).
func (s *Service) RemoveProjectImages(ctx context.Context, projectID int64) error {
	paths, err := s.db.ProjectAlertImagePaths(ctx, projectID)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := s.files.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
