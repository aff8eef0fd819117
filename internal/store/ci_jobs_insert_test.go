package store

import (
	"encoding/json"
	"strings"
	"testing"
)

// sampleOptions is a job's options of the 50-job configuration's size
// and shape.
const sampleOptions = `{"name":"build-api","stage":"build","script":["go build -o bin/$SERVICE ./services/$SERVICE"],"when":"on_success","allow_failure":false,"needs":null,"dependencies":null,"tags":["linux","docker"],"image":{"name":"golang:1.26"},"variables":[{"key":"SERVICE","value":"api"}],"inherit_variables":null,"artifacts":{"paths":["bin/"],"expire_in":"1 day"},"cache":[{"key_files":["go.sum"],"key_prefix":"go","paths":[".cache/go-mod/"],"policy":"pull","when":"on_success"}],"retry":{"max":2,"when":["runner_system_failure","stuck_or_timeout_failure"]},"interruptible":true,"stage_index":1,"yaml_variables":[{"key":"GO_VERSION","value":"1.26"},{"key":"REGISTRY","value":"registry.example.com/shop"},{"key":"DOCKER_DRIVER","value":"overlay2"},{"key":"DEPLOY_TARGET","value":"production"},{"key":"SERVICE","value":"api"}]}`

// TestAppendJSONText: the JSON string decodes to the text, byte for
// byte, whatever bytes it holds.
func TestAppendJSONText(t *testing.T) {
	var all strings.Builder
	for c := range 0x80 {
		all.WriteByte(byte(c))
	}
	for _, s := range []string{"", "plain", sampleOptions, all.String(), "ü 日本 😀 \u2028", `"\"`, "\x00\x1f\x7f"} {
		b := appendJSONText([]byte("x"), s)
		var got string
		if err := json.Unmarshal(b[1:], &got); err != nil || got != s || b[0] != 'x' {
			t.Errorf("%q: %s decodes to %q, %v", s, b, got, err)
		}
	}
}

func BenchmarkAppendJSONText(b *testing.B) {
	buf := make([]byte, 0, 64<<10)
	b.SetBytes(int64(len(sampleOptions)))
	for b.Loop() {
		buf = appendJSONText(buf[:0], sampleOptions)
	}
}
