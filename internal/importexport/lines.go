package importexport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
)

// DefaultMaxLine is the line bound Lines uses when given none.
const DefaultMaxLine = 16 << 20

// Lines calls fn with each line of the newline-delimited JSON file at path,
// numbered from 1. An empty line (or one of only spaces, tabs and a
// carriage return) is skipped; a final line without a newline counts. A
// line longer than maxLine bytes (DefaultMaxLine if maxLine <= 0), not
// counting its line ending, is a *FormatError naming the file by display
// and the line number; so is a line that is not a single valid JSON value.
// fn gets the raw bytes, which it must not keep past its return; its error
// stops the reading and is returned as it is, as are errors opening or
// reading the file.
func Lines(path, display string, maxLine int, fn func(line int, raw json.RawMessage) error) error {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var buf []byte
	for line := 1; ; line++ {
		buf = buf[:0]
		tooLong := false
		var rerr error
		for {
			chunk, err := br.ReadSlice('\n')
			// Keep at most maxLine bytes and a "\r\n"; past that, the
			// line is too long whatever follows.
			if !tooLong && len(buf)+len(chunk) <= maxLine+2 {
				buf = append(buf, chunk...)
			} else {
				tooLong = true
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			rerr = err
			break
		}
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		content := bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		if tooLong || len(content) > maxLine {
			return formatErr("%s: line %d is longer than %d bytes", display, line, maxLine)
		}
		if len(bytes.Trim(content, " \t\r")) > 0 {
			if !json.Valid(content) {
				return formatErr("%s: line %d is not valid JSON", display, line)
			}
			if err := fn(line, json.RawMessage(content)); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
	}
}
