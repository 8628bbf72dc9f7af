// Produce, group-less reads and offsets.
package main

import (
	"context"
	"fmt"
	"sort"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"pgkafka/compat/go/internal/runner"
)

func toMessage(topic string, r runner.Rec) *kafka.Message {
	m := &kafka.Message{TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: r.Partition}, Key: r.Key, Value: r.Value}
	for _, h := range r.Headers {
		m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
	}
	return m
}

func fromMessage(m *kafka.Message) runner.ReadRec {
	out := runner.ReadRec{Partition: m.TopicPartition.Partition, Offset: int64(m.TopicPartition.Offset), Key: m.Key, Value: m.Value, Headers: []runner.Header{}}
	for _, h := range m.Headers {
		out.Headers = append(out.Headers, runner.Header{Key: h.Key, Value: h.Value})
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

// send produces every record and waits for each delivery report, in input order.
func send(ctx context.Context, p *kafka.Producer, topic string, recs []runner.Rec) ([]delivered, error) {
	reports := make([]chan kafka.Event, len(recs))
	for i, r := range recs {
		reports[i] = make(chan kafka.Event, 1)
		if err := p.Produce(toMessage(topic, r), reports[i]); err != nil {
			return nil, err
		}
	}
	out := []delivered{}
	for _, ch := range reports {
		select {
		case e := <-ch:
			m := e.(*kafka.Message)
			if m.TopicPartition.Error != nil {
				return nil, m.TopicPartition.Error
			}
			out = append(out, delivered{m.TopicPartition.Partition, int64(m.TopicPartition.Offset)})
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return out, nil
}

func produce(ctx context.Context, bootstrap string, a produceArgs) (any, error) {
	codec := a.Codec
	if codec == "" {
		codec = "none"
	}
	p, err := kafka.NewProducer(conf(bootstrap, kafka.ConfigMap{"acks": "all", "compression.type": codec, "linger.ms": 20, "enable.idempotence": a.Idempotent}))
	if err != nil {
		return nil, err
	}
	defer p.Close()
	out, err := send(ctx, p, a.Topic, a.Records)
	if err != nil {
		return nil, err
	}
	return map[string]any{"delivered": out}, nil
}

type fetchArgs struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
	Offset     *int64  `json:"offset"`
	Committed  bool    `json:"readCommitted"`
}

// fetch: Assign() at an offset (no group join, no commits), read until every partition reports EOF.
func fetch(ctx context.Context, bootstrap string, a fetchArgs) (any, error) {
	iso := "read_uncommitted"
	if a.Committed {
		iso = "read_committed"
	}
	c, err := kafka.NewConsumer(conf(bootstrap, kafka.ConfigMap{"group.id": "compat-unused", "enable.auto.commit": false, "enable.partition.eof": true, "isolation.level": iso}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tps := []kafka.TopicPartition{}
	for _, p := range a.Partitions {
		off := kafka.OffsetBeginning
		if a.Offset != nil {
			off = kafka.Offset(*a.Offset)
		}
		tps = append(tps, kafka.TopicPartition{Topic: &a.Topic, Partition: p, Offset: off})
	}
	if err := c.Assign(tps); err != nil {
		return nil, err
	}
	out := []runner.ReadRec{}
	eof := map[int32]bool{}
	for len(eof) < len(a.Partitions) {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read %d records, EOF on %v: %w", len(out), eof, ctx.Err())
		}
		switch e := c.Poll(200).(type) {
		case *kafka.Message:
			out = append(out, fromMessage(e))
		case kafka.PartitionEOF:
			eof[e.Partition] = true
		case kafka.Error:
			return nil, e
		}
	}
	runner.SortRecs(out)
	return map[string]any{"records": out}, nil
}

func offsets(_ context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	At    *int64 `json:"timestamp"`
}) (any, error) {
	c, err := kafka.NewConsumer(conf(bootstrap, kafka.ConfigMap{"group.id": "compat-unused", "enable.auto.commit": false}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	md, err := c.GetMetadata(&a.Topic, false, 10000)
	if err != nil {
		return nil, err
	}
	n := len(md.Topics[a.Topic].Partitions)
	earliest, latest := []int64{}, []int64{}
	tps := []kafka.TopicPartition{}
	for p := int32(0); p < int32(n); p++ {
		lo, hi, err := c.QueryWatermarkOffsets(a.Topic, p, 10000)
		if err != nil {
			return nil, err
		}
		earliest, latest = append(earliest, lo), append(latest, hi)
		if a.At != nil {
			tps = append(tps, kafka.TopicPartition{Topic: &a.Topic, Partition: p, Offset: kafka.Offset(*a.At)})
		}
	}
	out := map[string]any{"earliest": earliest, "latest": latest}
	if a.At != nil {
		res, err := c.OffsetsForTimes(tps, 10000)
		if err != nil {
			return nil, err
		}
		sort.Slice(res, func(i, j int) bool { return res[i].Partition < res[j].Partition })
		at := []int64{}
		for _, tp := range res {
			at = append(at, int64(tp.Offset))
		}
		out["byTimestamp"] = at
	}
	return out, nil
}
