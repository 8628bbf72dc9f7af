// Produce, group-less reads and offsets.
package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"

	"pgkafka/compat/go/internal/runner"
)

var codecs = map[string]compress.Compression{
	"": 0, "none": 0, "gzip": kafka.Gzip, "snappy": kafka.Snappy, "lz4": kafka.Lz4, "zstd": kafka.Zstd,
}

type produceArgs struct {
	Topic   string       `json:"topic"`
	Codec   string       `json:"codec"`
	Records []runner.Rec `json:"records"`
}

type delivered struct {
	Partition int   `json:"partition"`
	Offset    int64 `json:"offset"`
}

// produce writes with a Writer whose balancer keeps each message's partition;
// Completion reports each message's offset, matched back to the input by
// its position, carried in WriterData.
func produce(ctx context.Context, bootstrap string, a produceArgs) (any, error) {
	codec, ok := codecs[a.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", a.Codec)
	}
	out := make([]delivered, len(a.Records))
	var mu sync.Mutex
	w := &kafka.Writer{
		Addr: kafka.TCP(bootstrap), Topic: a.Topic, RequiredAcks: kafka.RequireAll, Compression: codec,
		Balancer:     kafka.BalancerFunc(func(m kafka.Message, _ ...int) int { return m.Partition }),
		BatchTimeout: 20 * time.Millisecond, Transport: transport(),
		Completion: func(ms []kafka.Message, err error) {
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for _, m := range ms {
				out[m.WriterData.(int)] = delivered{m.Partition, m.Offset}
			}
		},
	}
	msgs := make([]kafka.Message, len(a.Records))
	for i, r := range a.Records {
		msgs[i] = kafka.Message{Partition: int(r.Partition), Key: r.Key, Value: r.Value, WriterData: i}
		for _, h := range r.Headers {
			msgs[i].Headers = append(msgs[i].Headers, kafka.Header{Key: h.Key, Value: h.Value})
		}
	}
	err := w.WriteMessages(ctx, msgs...)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"delivered": out}, nil
}

func fromMessage(m kafka.Message) runner.ReadRec {
	out := runner.ReadRec{Partition: int32(m.Partition), Offset: m.Offset, Key: m.Key, Value: m.Value, Headers: []runner.Header{}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: h.Key, Value: h.Value})
	}
	return out
}

type fetchArgs struct {
	Topic      string `json:"topic"`
	Partitions []int  `json:"partitions"`
	Offset     *int64 `json:"offset"`
	Committed  bool   `json:"readCommitted"`
}

// fetch reads each partition with a group-less Reader from an offset to the
// end offset (or until an idle second, as transaction markers are never returned).
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	out := []runner.ReadRec{}
	iso := kafka.ReadUncommitted
	if a.Committed {
		iso = kafka.ReadCommitted
	}
	for _, p := range a.Partitions {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{bootstrap}, Dialer: dialer(), Topic: a.Topic, Partition: p, MaxWait: 300 * time.Millisecond, IsolationLevel: iso})
		start := kafka.FirstOffset
		if a.Offset != nil {
			start = *a.Offset
		}
		if err := r.SetOffset(start); err != nil {
			r.Close()
			return nil, err
		}
		end, err := r.ReadLag(ctx)
		if err != nil {
			r.Close()
			return nil, err
		}
		idle := 8 * time.Second
		for end > 0 {
			rctx, cancel := context.WithTimeout(ctx, idle)
			m, err := r.ReadMessage(rctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				break
			}
			if err != nil {
				r.Close()
				return nil, err
			}
			out = append(out, fromMessage(m))
			idle = time.Second
			if m.HighWaterMark > 0 && m.Offset+1 >= m.HighWaterMark {
				break
			}
		}
		r.Close()
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func partitionsOf(ctx context.Context, bootstrap, topic string) ([]int, error) {
	md, err := client(bootstrap).Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, err
	}
	ids := []int{}
	for _, p := range md.Topics[0].Partitions {
		ids = append(ids, p.ID)
	}
	sort.Ints(ids)
	return ids, nil
}

func offsets(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	ps, err := partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	reqs := []kafka.OffsetRequest{}
	for _, p := range ps {
		reqs = append(reqs, kafka.FirstOffsetOf(p), kafka.LastOffsetOf(p))
		if a.At != nil {
			reqs = append(reqs, kafka.TimeOffsetOf(p, time.UnixMilli(*a.At)))
		}
	}
	res, err := client(bootstrap).ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{a.Topic: reqs}})
	if err != nil {
		return nil, err
	}
	byP := map[int]kafka.PartitionOffsets{}
	for _, po := range res.Topics[a.Topic] {
		if po.Error != nil {
			return nil, po.Error
		}
		byP[po.Partition] = po
	}
	earliest, latest, at := []int64{}, []int64{}, []int64{}
	for _, p := range ps {
		earliest = append(earliest, byP[p].FirstOffset)
		latest = append(latest, byP[p].LastOffset)
		if a.At != nil {
			o := int64(-1)
			for off := range byP[p].Offsets {
				o = off
			}
			at = append(at, o)
		}
	}
	out := map[string]any{"earliest": earliest, "latest": latest}
	if a.At != nil {
		out["byTimestamp"] = at
	}
	return out, nil
}
