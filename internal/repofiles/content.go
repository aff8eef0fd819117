package repofiles

import (
	"encoding/base64"

	"quarry/internal/model"
)

// DecodeContent turns a file's content parameter into bytes per its
// encoding: "base64" is standard Base64 (with padding; line breaks are
// ignored), anything else ("text", "") is the content as given. Content
// that is not valid Base64 is a 400 "content is not valid Base64".
func DecodeContent(content, encoding string) ([]byte, error) {
	if encoding != "base64" {
		return []byte(content), nil
	}
	data, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return nil, model.BadRequest("content is not valid Base64")
	}
	return data, nil
}
