package legacy

import "testing"

func BenchmarkParseChatEvent(b *testing.B) {
	for name, frame := range map[string][]byte{
		"token": []byte(`{"type":"token","content":"Size 43 is in stock."}`),
		"card":  []byte(scoutCard),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(frame)))
			for b.Loop() {
				if ParseChatEvent(frame) == nil {
					b.Fatal("nil")
				}
			}
		})
	}
}
