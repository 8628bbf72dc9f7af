// segmentio/kafka-go 0.2.1 (the release Debian ships; fixed versions, no ApiVersions) against pgkafka: topics (CreateTopics v0,
// DeleteTopics v0), produce (Produce v2, magic 1), partition and group reads
// (Fetch v2, magic 1; JoinGroup v1, SyncGroup v0, OffsetCommit v2,
// OffsetFetch v1, ListOffsets v1). Reads {"bootstrap", "tag", "prefilled",
// "records"} as JSON on stdin and writes one result per step on stdout.
package main

import (
	"context"
	"encoding/json"
	"os"
	"time"

	kafka "github.com/segmentio/kafka-go"
)

type input struct {
	Bootstrap string `json:"bootstrap"`
	Tag       string `json:"tag"`
	Prefilled string `json:"prefilled"`
	Records   int    `json:"records"`
}

type result struct {
	Step  string      `json:"step"`
	OK    bool        `json:"ok"`
	Error string      `json:"error,omitempty"`
	Value interface{} `json:"value,omitempty"`
}

var results []result

func step(name string, fn func(ctx context.Context) (interface{}, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	v, err := fn(ctx)
	if err != nil {
		results = append(results, result{Step: name, Error: err.Error()})
		return
	}
	results = append(results, result{Step: name, OK: true, Value: v})
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	topic := in.Tag + "-t"

	step("create topics", func(ctx context.Context) (interface{}, error) {
		conn, err := kafka.DialContext(ctx, "tcp", in.Bootstrap)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		if err := conn.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: 2, ReplicationFactor: 1}, kafka.TopicConfig{Topic: topic + "-gone", NumPartitions: 1, ReplicationFactor: 1}); err != nil {
			return nil, err
		}
		parts, err := conn.ReadPartitions(topic)
		if err != nil {
			return nil, err
		}
		return len(parts), nil
	})

	step("delete topics", func(ctx context.Context) (interface{}, error) {
		conn, err := kafka.DialContext(ctx, "tcp", in.Bootstrap)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return nil, conn.DeleteTopics(topic + "-gone")
	})

	step("list offsets", func(ctx context.Context) (interface{}, error) {
		conn, err := kafka.DialLeader(ctx, "tcp", in.Bootstrap, in.Prefilled, 0)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		first, last, err := conn.ReadOffsets()
		if err != nil {
			return nil, err
		}
		return []int64{first, last}, nil
	})

	step("produce", func(ctx context.Context) (interface{}, error) {
		w := kafka.NewWriter(kafka.WriterConfig{Brokers: []string{in.Bootstrap}, Topic: topic, BatchTimeout: 50 * time.Millisecond})
		defer w.Close()
		return nil, w.WriteMessages(ctx, kafka.Message{Value: []byte("p0")}, kafka.Message{Value: []byte("p1")})
	})

	step("fetch", func(ctx context.Context) (interface{}, error) {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{in.Bootstrap}, Topic: in.Prefilled, Partition: 0, MaxWait: 200 * time.Millisecond})
		defer r.Close()
		var values []string
		for len(values) < in.Records {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				return values, err
			}
			values = append(values, string(m.Value))
		}
		return values, nil
	})

	step("group consume and commit", func(ctx context.Context) (interface{}, error) {
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{in.Bootstrap}, Topic: in.Prefilled, GroupID: in.Tag + "-g", MaxWait: 200 * time.Millisecond})
		var values []string
		for len(values) < in.Records {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				r.Close()
				return values, err
			}
			if err := r.CommitMessages(ctx, m); err != nil {
				r.Close()
				return values, err
			}
			values = append(values, string(m.Value))
		}
		if err := r.Close(); err != nil {
			return nil, err
		}
		return values, nil
	})

	if err := json.NewEncoder(os.Stdout).Encode(map[string]interface{}{"results": results}); err != nil {
		panic(err)
	}
}
