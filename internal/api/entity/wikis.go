package entity

import "quarry/internal/wikis"

// WikiPageBasic is a page in a list without content.
type WikiPageBasic struct {
	Format string `json:"format"`
	Slug   string `json:"slug"`
	Title  string `json:"title"`
}

// WikiPage is a page with its content (raw, or rendered HTML).
type WikiPage struct {
	WikiPageBasic
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
}

// WikiPage renders a page: with content and encoding when it was loaded.
func (r *Renderer) WikiPage(p wikis.Page) any {
	basic := WikiPageBasic{Format: p.Format, Slug: p.Slug, Title: p.Title}
	if !p.HasContent {
		return basic
	}
	return WikiPage{WikiPageBasic: basic, Content: string(p.Content), Encoding: p.Encoding()}
}

// WikiAttachment is an uploaded file stored in a wiki.
type WikiAttachment struct {
	FileName string             `json:"file_name"`
	FilePath string             `json:"file_path"`
	Branch   string             `json:"branch"`
	Link     WikiAttachmentLink `json:"link"`
}

// WikiAttachmentLink says how to link an attachment from a page.
type WikiAttachmentLink struct {
	URL      string `json:"url"`
	Markdown string `json:"markdown"`
}

// WikiAttachment renders an attachment.
func (r *Renderer) WikiAttachment(a wikis.Attachment) WikiAttachment {
	return WikiAttachment{FileName: a.FileName, FilePath: a.FilePath, Branch: a.Branch,
		Link: WikiAttachmentLink{URL: a.FilePath, Markdown: a.Markdown}}
}
