// Produce, group-less reads and offsets.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"pgkafka/compat/go/internal/runner"
)

var codecs = map[string]kgo.CompressionCodec{
	"": kgo.NoCompression(), "none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
	"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

func toRecord(topic string, r runner.Rec) *kgo.Record {
	rec := &kgo.Record{Topic: topic, Partition: r.Partition, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: h.Key, Value: h.Value})
	}
	return rec
}

func fromRecord(r *kgo.Record) runner.ReadRec {
	out := runner.ReadRec{Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Headers: []runner.Header{}}
	for _, h := range r.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

type produceArgs struct {
	Topic   string       `json:"topic"`
	Codec   string       `json:"codec"`
	Records []runner.Rec `json:"records"`
}

type delivered struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

// produce sends with franz-go's defaults: acks=all and the idempotent producer.
func produce(ctx context.Context, bootstrap string, a produceArgs) (any, error) {
	codec, ok := codecs[a.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", a.Codec)
	}
	cl, err := client(bootstrap, kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(20*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(a.Records))
	for i, r := range a.Records {
		recs[i] = toRecord(a.Topic, r)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		return nil, err
	}
	// Results come in the order partitions finished; the records carry their offsets in input order.
	out := []delivered{}
	for _, r := range recs {
		out = append(out, delivered{r.Partition, r.Offset})
	}
	return map[string]any{"delivered": out}, nil
}

type fetchArgs struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Offset     *int64  `json:"offset"`
	Committed  bool    `json:"readCommitted"`
	// MaxBytes bounds each fetch response (franz-go's FetchMaxBytes), so a read takes many fetches.
	MaxBytes int32 `json:"maxBytes"`
}

// fetch reads group-less (ConsumePartitions) from an offset up to the end offsets.
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	adm, acl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer acl.Close()
	var ends kadm.ListedOffsets
	if a.Committed {
		ends, err = adm.ListCommittedOffsets(ctx, a.Topic)
	} else {
		ends, err = adm.ListEndOffsets(ctx, a.Topic)
	}
	if err != nil {
		return nil, err
	}
	start := kgo.NewOffset().AtStart()
	if a.Offset != nil {
		start = kgo.NewOffset().At(*a.Offset)
	}
	assign := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for _, p := range a.Partitions {
		assign[p] = start
		if o, ok := ends.Lookup(a.Topic, p); ok {
			want[p] = o.Offset
		}
	}
	iso := kgo.ReadUncommitted()
	if a.Committed {
		iso = kgo.ReadCommitted()
	}
	opts := []kgo.Opt{kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{a.Topic: assign}), kgo.FetchIsolationLevel(iso)}
	if a.MaxBytes > 0 {
		opts = append(opts, kgo.FetchMaxBytes(a.MaxBytes), kgo.FetchMaxPartitionBytes(a.MaxBytes))
	}
	cl, err := client(bootstrap, opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	out := []runner.ReadRec{}
	pos := map[int32]int64{}
	done := func() bool {
		for p, end := range want {
			at, ok := pos[p]
			if a.Offset != nil && !ok {
				at = *a.Offset
			}
			if at < end {
				return false
			}
		}
		return true
	}
	// Control records (transaction markers) and aborted records are never
	// returned, so a read can end short of the end offset: it stops after an
	// idle poll (8 s before the first record, 1.5 s after).
	for !done() {
		idle := 8 * time.Second
		if len(out) > 0 {
			idle = 1500 * time.Millisecond
		}
		pctx, cancel := context.WithTimeout(ctx, idle)
		fs := cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fetch stopped at %v of %v: %w", pos, want, ctx.Err())
		}
		if fs.NumRecords() == 0 && pctx.Err() != nil {
			break
		}
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				return nil, e.Err
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			out = append(out, fromRecord(r))
			pos[r.Partition] = r.Offset + 1
		})
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func offsets(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	perPartition := func(l kadm.ListedOffsets, err error) ([]int64, error) {
		if err != nil {
			return nil, err
		}
		if err := l.Error(); err != nil {
			return nil, err
		}
		out := []int64{}
		for _, o := range sortedListed(l[a.Topic]) {
			out = append(out, o.Offset)
		}
		return out, nil
	}
	earliest, err := perPartition(adm.ListStartOffsets(ctx, a.Topic))
	if err != nil {
		return nil, err
	}
	latest, err := perPartition(adm.ListEndOffsets(ctx, a.Topic))
	if err != nil {
		return nil, err
	}
	res := map[string]any{"earliest": earliest, "latest": latest}
	if a.At != nil {
		if res["byTimestamp"], err = perPartition(adm.ListOffsetsAfterMilli(ctx, *a.At, a.Topic)); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func sortedListed(m map[int32]kadm.ListedOffset) []kadm.ListedOffset {
	out := []kadm.ListedOffset{}
	for _, o := range m {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Partition < out[j].Partition })
	return out
}
