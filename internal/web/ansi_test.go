package web

import (
	"html/template"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func joinChunks(cs []logChunk) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(c.HTML)
	}
	return b.String()
}

func TestRenderLog(t *testing.T) {
	const e = "\x1b"
	cases := []struct {
		name, in string
		want     string
	}{
		{"plain", "hello\nworld\n", `<div class="log-line">hello</div><div class="log-line">world</div>`},
		{"escaped", "<script>alert('x')</script> & \"q\"\n",
			`<div class="log-line">&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &#34;q&#34;</div>`},
		{"colour and reset", e + "[31mred" + e + "[0m plain\n",
			`<div class="log-line"><span class="term-fg1">red</span> plain</div>`},
		{"bold green, bright, background", e + "[1;32mok" + e + "[22m" + e + "[93;44mhi" + e + "[m\n",
			`<div class="log-line"><span class="term-fg2 term-bold">ok</span><span class="term-fg11 term-bg4">hi</span></div>`},
		{"italic underline strike", e + "[3;4;9mx" + e + "[23;24;29my\n",
			`<div class="log-line"><span class="term-italic term-underline term-strike">x</span>y</div>`},
		{"256 and truecolor mapped", e + "[38;5;196ma" + e + "[38;2;0;0;0;48;5;15mb" + e + "[39;49mc\n",
			`<div class="log-line"><span class="term-fg9">a</span><span class="term-fg0 term-bg15">b</span>c</div>`},
		{"malformed extended colour", e + "[38;5;999mx" + e + "[38;2;1mz\n", `<div class="log-line">xz</div>`},
		{"style spans lines", e + "[36mone\ntwo" + e + "[0m\n",
			`<div class="log-line"><span class="term-fg6">one</span></div><div class="log-line"><span class="term-fg6">two</span></div>`},
		{"carriage return starts over", "10%\r50%\r100% done\r\n", `<div class="log-line">100% done</div>`},
		{"erase and cursor sequences dropped", e + "[0K" + e + "[2Jtext" + e + "]0;title\x07!\x01\n", `<div class="log-line">text!</div>`},
		{"tab kept", "a\tb\n", "<div class=\"log-line\">a\tb</div>"},
		{"invalid utf-8", "a\xffb\n", "<div class=\"log-line\">a\uFFFDb</div>"},
		{"section", e + "[0Ksection_start:1700000000:build_script\r" + e + "[0K" + e + "[32;1mBuilding" + e + "[0;m\nstep\n" +
			e + "[0Ksection_end:1700000001:build_script\r" + e + "[0K\nafter\n",
			`<details class="log-section" data-section="build_script" open><summary class="log-line"><span class="term-fg2 term-bold">Building</span></summary>` +
				`<div class="section-body"><div class="log-line">step</div></div></details><div class="log-line">after</div>`},
		{"collapsed nested sections", "section_start:1:outer[collapsed=true]\r" + e + "[0KOuter\nsection_start:2:inner\r" + e + "[0KInner\nx\n" +
			"section_end:3:outer\r" + e + "[0K\ny\n",
			`<details class="log-section" data-section="outer"><summary class="log-line">Outer</summary><div class="section-body">` +
				`<details class="log-section" data-section="inner" open><summary class="log-line">Inner</summary><div class="section-body">` +
				`<div class="log-line">x</div></div></details></div></details><div class="log-line">y</div>`},
		{"section end of nothing dropped", "section_end:1:nope\r" + e + "[0K\nz\n", `<div class="log-line">z</div>`},
		{"section left open is closed in the chunk", "section_start:1:s\r" + e + "[0KS\nin\n",
			`<details class="log-section" data-section="s" open><summary class="log-line">S</summary><div class="section-body"><div class="log-line">in</div></div></details>`},
		{"not a marker", "section_start:x:y\nsection_start:1:bad name\n",
			`<div class="log-line">section_start:x:y</div><div class="log-line">section_start:1:bad name</div>`},
		{"html in a section name and header", "section_start:1:a\r" + e + "[0K<b>hdr</b>\n",
			`<details class="log-section" data-section="a" open><summary class="log-line">&lt;b&gt;hdr&lt;/b&gt;</summary><div class="section-body"></div></details>`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			chunks, used, _ := renderLog([]byte(c.in), newLogState(), false)
			if used != len(c.in) {
				t.Errorf("used %d of %d", used, len(c.in))
			}
			if got := joinChunks(chunks); got != c.want {
				t.Errorf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// TestRenderLog_pieces renders a log a piece at a time, as a page follows
// a running job: only whole lines until the log is final, the style and
// open sections carried in the state (through its token), and a section
// opened before a piece closed in it.
func TestRenderLog_pieces(t *testing.T) {
	const e = "\x1b"
	st := newLogState()
	chunks, used, st := renderLog([]byte("section_start:1:s\r"+e+"[0KHead\n"+e+"[31mred\npart"), st, false)
	if used != len("section_start:1:s\r"+e+"[0KHead\n"+e+"[31mred\n") {
		t.Fatalf("used %d", used)
	}
	if len(chunks) != 1 || chunks[0].Depth != 0 {
		t.Fatalf("chunks %+v", chunks)
	}
	tok := st.encode()
	if tok != "1.-1.0~s" {
		t.Errorf("state token %q", tok)
	}
	st, ok := decodeLogState(tok)
	if !ok {
		t.Fatal("token refused")
	}
	chunks, used, st = renderLog([]byte("partial more\nsection_end:2:s\r"+e+"[0K\nout"), st, true)
	if used != len("partial more\nsection_end:2:s\r"+e+"[0K\nout") {
		t.Errorf("final piece: used %d", used)
	}
	want := []logChunk{
		{Depth: 1, HTML: `<div class="log-line"><span class="term-fg1">partial more</span></div>`},
		{Depth: 0, HTML: `<div class="log-line"><span class="term-fg1">out</span></div>`},
	}
	if len(chunks) != len(want) {
		t.Fatalf("chunks %+v; want %+v", chunks, want)
	}
	for i := range want {
		if chunks[i] != want[i] {
			t.Errorf("chunk %d %+v; want %+v", i, chunks[i], want[i])
		}
	}
	if len(st.Open) != 0 {
		t.Errorf("open after the end: %v", st.Open)
	}
}

func TestDecodeLogState(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"", true}, {"-1.-1.0", true}, {"15.3.63~a~b.c-d_e", true},
		{"16.0.0", false}, {"0.0.64", false}, {"0.0", false}, {"x.0.0", false}, {"0.0.0~", false}, {"0.0.0~a b", false},
		{"0.0.0~<x>", false}, {"0.0.0" + strings.Repeat("~a", maxLogSections+1), false},
	} {
		st, ok := decodeLogState(c.in)
		if ok != c.ok {
			t.Errorf("decode %q: ok %v; want %v", c.in, ok, c.ok)
		}
		if ok && c.in != "" && st.encode() != c.in {
			t.Errorf("decode %q: encodes back as %q", c.in, st.encode())
		}
	}
}

// tagRE finds the tags renderLog writes.
var tagRE = regexp.MustCompile(`<(/?)([a-z]+)([^>]*)>`)

// FuzzANSI renders any bytes: the HTML is balanced, its only tags are the
// renderer's own with known attributes, no text breaks out of escaping,
// the state token reads back, and pieces never use more than they get.
func FuzzANSI(f *testing.F) {
	for _, s := range []string{"", "plain\n", "\x1b[31;1mred\x1b[0m\n", "a\rb\r\n", "section_start:1:x[collapsed=true]\r\x1b[0Kh\nsection_end:2:x\r\x1b[0K\n",
		"\x1b[38;2;1;2;3m\x1b[48;5;200m<&>\"'\n", "\x1b]0;t\x07\x1b[?25l", "section_end:1:y\nsection_start:1:y\n"} {
		f.Add([]byte(s), "", false)
	}
	f.Add([]byte("x\n"), "1.2.3~a~b", true)
	allowed := map[string]bool{"div": true, "span": true, "details": true, "summary": true}
	f.Fuzz(func(t *testing.T, data []byte, token string, final bool) {
		st, ok := decodeLogState(token)
		if !ok {
			st = newLogState()
		}
		chunks, used, next := renderLog(data, st, final)
		if used < 0 || used > len(data) || (final && used != len(data)) {
			t.Fatalf("used %d of %d (final %v)", used, len(data), final)
		}
		if back, ok := decodeLogState(next.encode()); !ok || back.encode() != next.encode() {
			t.Fatalf("state %q does not read back", next.encode())
		}
		for _, c := range chunks {
			if c.Depth < 0 || c.Depth > maxLogSections {
				t.Fatalf("chunk depth %d", c.Depth)
			}
			if !utf8.ValidString(c.HTML) {
				t.Fatalf("invalid UTF-8 in %q", c.HTML)
			}
			var stack []string
			for _, m := range tagRE.FindAllStringSubmatch(c.HTML, -1) {
				name := m[2]
				if !allowed[name] {
					t.Fatalf("tag %q in %q", m[0], c.HTML)
				}
				if m[1] == "/" {
					if len(stack) == 0 || stack[len(stack)-1] != name {
						t.Fatalf("unbalanced %q in %q", m[0], c.HTML)
					}
					stack = stack[:len(stack)-1]
					continue
				}
				if strings.ContainsAny(m[3], "<'") || strings.Contains(m[3], "on") && !strings.Contains(m[3], "section") {
					t.Fatalf("attributes %q", m[3])
				}
				stack = append(stack, name)
			}
			if len(stack) != 0 {
				t.Fatalf("unclosed %v in %q", stack, c.HTML)
			}
			text := tagRE.ReplaceAllString(c.HTML, "")
			if strings.ContainsAny(text, "<>\"'") {
				t.Fatalf("unescaped text %q", text)
			}
			_ = template.HTML(c.HTML)
		}
	})
}

// BenchmarkRenderLog renders the most a job's page shows (maxLogView
// bytes) of a coloured log with sections: the allocations stay linear in
// the log's size (a copy of the rest of the log per line made this
// quadratic once: 2.6 GB over the e2e suite).
func BenchmarkRenderLog(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < maxLogView; i++ {
		if i%200 == 0 {
			sb.WriteString("section_start:1:step[collapsed=true]\r\x1b[0K\x1b[36;1mstep\x1b[0m\n")
		}
		sb.WriteString("\x1b[32mok\x1b[0m line of the build's output, number ")
		sb.WriteString(strings.Repeat("x", i%40))
		sb.WriteByte('\n')
		if i%200 == 199 {
			sb.WriteString("section_end:2:step\r\x1b[0K\n")
		}
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		renderLog(data, newLogState(), true)
	}
}
