package export

import (
	"context"
	"testing"
)

// BenchmarkRecords measures turning a batch of 256 events into OTLP log
// records (the card flattened to attributes, through the log SDK).
func BenchmarkRecords(b *testing.B) {
	src := openTrailB(b)
	entries, err := src.EventsAfter(context.Background(), 0, 256)
	if err != nil || len(entries) != 256 {
		b.Fatalf("%d entries, %v", len(entries), err)
	}
	enc := NewEncoder(Resource("bench"), "bench")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := enc.Records(entries); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*256), "ns/event")
}
