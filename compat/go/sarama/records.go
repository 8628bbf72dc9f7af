// Produce, group-less reads and offsets.
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"

	"pgkafka/compat/go/internal/runner"
)

var codecs = map[string]sarama.CompressionCodec{
	"": sarama.CompressionNone, "none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD,
}

// bytesOrNil keeps a null key or value null: a nil Encoder is sent as -1, ByteEncoder{} as zero-length.
func bytesOrNil(b []byte) sarama.Encoder {
	if b == nil {
		return nil
	}
	return sarama.ByteEncoder(b)
}

func toMessage(topic string, r runner.Rec) *sarama.ProducerMessage {
	m := &sarama.ProducerMessage{Topic: topic, Partition: r.Partition, Key: bytesOrNil(r.Key), Value: bytesOrNil(r.Value)}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
	}
	return m
}

func fromMessage(m *sarama.ConsumerMessage) runner.ReadRec {
	out := runner.ReadRec{Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Headers: []runner.Header{}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: string(h.Key), Value: h.Value})
	}
	return out
}

type produceArgs struct {
	Topic      string       `json:"topic"`
	Codec      string       `json:"codec"`
	Records    []runner.Rec `json:"records"`
	Idempotent bool         `json:"idempotent"`
}

type delivered struct {
	Partition int32 `json:"partition"`
	Offset    int64 `json:"offset"`
}

func produce(_ context.Context, bootstrap string, a produceArgs) (any, error) {
	codec, ok := codecs[a.Codec]
	if !ok {
		return nil, fmt.Errorf("unknown codec %q", a.Codec)
	}
	c := config()
	c.Producer.Compression = codec
	if a.Idempotent {
		c.Producer.Idempotent = true
		c.Net.MaxOpenRequests = 1
	}
	p, err := sarama.NewSyncProducer([]string{bootstrap}, c)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	msgs := make([]*sarama.ProducerMessage, len(a.Records))
	for i, r := range a.Records {
		msgs[i] = toMessage(a.Topic, r)
	}
	if err := p.SendMessages(msgs); err != nil {
		return nil, err
	}
	out := []delivered{}
	for _, m := range msgs {
		out = append(out, delivered{m.Partition, m.Offset})
	}
	return map[string]any{"delivered": out}, nil
}

type fetchArgs struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Offset     *int64  `json:"offset"`
	Committed  bool    `json:"readCommitted"`
}

// fetch reads group-less (ConsumePartition) from an offset up to the end offset.
// Transaction markers and aborted records are never delivered, so a read also
// ends after an idle second once it has records.
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	c := config()
	if a.Committed {
		c.Consumer.IsolationLevel = sarama.ReadCommitted
	}
	cl, err := sarama.NewClient([]string{bootstrap}, c)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	consumer, err := sarama.NewConsumerFromClient(cl)
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	out := []runner.ReadRec{}
	for _, p := range a.Partitions {
		end, err := cl.GetOffset(a.Topic, p, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		start := sarama.OffsetOldest
		if a.Offset != nil {
			start = *a.Offset
		}
		if a.Offset != nil && *a.Offset >= end || end == 0 {
			continue
		}
		pc, err := consumer.ConsumePartition(a.Topic, p, start)
		if err != nil {
			return nil, err
		}
		idle := 8 * time.Second
	read:
		for {
			select {
			case m := <-pc.Messages():
				out = append(out, fromMessage(m))
				idle = time.Second
				if m.Offset+1 >= end {
					break read
				}
			case e := <-pc.Errors():
				pc.Close()
				return nil, e
			case <-time.After(idle):
				break read
			case <-ctx.Done():
				pc.Close()
				return nil, ctx.Err()
			}
		}
		pc.Close()
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func offsets(_ context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	cl, err := sarama.NewClient([]string{bootstrap}, config())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ps, err := cl.Partitions(a.Topic)
	if err != nil {
		return nil, err
	}
	res := map[string]any{}
	kinds := map[string]int64{"earliest": sarama.OffsetOldest, "latest": sarama.OffsetNewest}
	if a.At != nil {
		kinds["byTimestamp"] = *a.At
	}
	for name, ts := range kinds {
		list := []int64{}
		for _, p := range ps {
			o, err := cl.GetOffset(a.Topic, p, ts)
			if err != nil {
				return nil, err
			}
			list = append(list, o)
		}
		res[name] = list
	}
	return res, nil
}
