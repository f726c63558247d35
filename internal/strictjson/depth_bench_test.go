package strictjson

import (
	"fmt"
	"strings"
	"testing"
)

func BenchmarkExceedsDepth(b *testing.B) {
	var hits []string
	for i := 0; len(strings.Join(hits, ",")) < 64<<10; i++ {
		hits = append(hits, fmt.Sprintf(`{"id":"doc-%05d","score":0.%04d,"title":"Refund policy section %d","snippet":"Customers may return unused items within thirty days of delivery for a full refund; see \"Returns\" for details.","tags":["policy","refund","v%d"]}`, i, 9999-i, i, i%7))
	}
	v := []byte(`{"hits":[` + strings.Join(hits, ",") + `]}`)
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		if exceedsDepth(v, 60) {
			b.Fatal("too deep")
		}
	}
}
