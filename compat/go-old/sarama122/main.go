// Sarama 1.22 (github.com/Shopify/sarama, the release Debian ships and
// Burrow 1.2 is built on) against pgkafka, at one config.Version given in
// SARAMA_VERSION ("" for Sarama's default, V0_8_2_0). Reads {"bootstrap",
// "tag"} as JSON on stdin and writes one result per step on stdout; a step
// that fails reports its error and the next steps still run.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/Shopify/sarama"
)

type input struct {
	Bootstrap string `json:"bootstrap"`
	Tag       string `json:"tag"`
	// A topic the test filled with Records records (values "v0".."vN-1") at partition 0.
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

func step(name string, fn func() (interface{}, error)) {
	done := make(chan result, 1)
	go func() {
		v, err := fn()
		if err != nil {
			done <- result{Step: name, Error: err.Error()}
			return
		}
		done <- result{Step: name, OK: true, Value: v}
	}()
	select {
	case r := <-done:
		results = append(results, r)
	case <-time.After(20 * time.Second):
		results = append(results, result{Step: name, Error: "timed out"})
	}
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	conf := sarama.NewConfig()
	conf.ClientID = "sarama-1.22"
	if v := os.Getenv("SARAMA_VERSION"); v != "" {
		parsed, err := sarama.ParseKafkaVersion(v)
		if err != nil {
			panic(err)
		}
		conf.Version = parsed
	}
	// SARAMA_COMPRESSION (gzip, snappy, lz4): produce compressed message sets, and read them back.
	compression := os.Getenv("SARAMA_COMPRESSION")
	switch compression {
	case "gzip":
		conf.Producer.Compression = sarama.CompressionGZIP
	case "snappy":
		conf.Producer.Compression = sarama.CompressionSnappy
	case "lz4":
		conf.Producer.Compression = sarama.CompressionLZ4
	}
	conf.Producer.Return.Successes = true
	conf.Producer.Partitioner = sarama.NewManualPartitioner
	conf.Producer.RequiredAcks = sarama.WaitForAll
	conf.Consumer.Return.Errors = true
	conf.Consumer.Offsets.Initial = sarama.OffsetOldest
	conf.Metadata.Retry.Max = 2
	conf.Metadata.Retry.Backoff = 200 * time.Millisecond
	brokers := []string{in.Bootstrap}
	topic := in.Tag + "-t"

	client, err := sarama.NewClient(brokers, conf)
	if err != nil {
		panic(err)
	}
	defer client.Close()

	// Metadata (v0 below 0.10, v1 from 0.10, v5 from 1.0): auto-creates the topic.
	step("metadata", func() (interface{}, error) {
		if err := client.RefreshMetadata(topic); err != nil {
			return nil, err
		}
		return client.Partitions(topic)
	})

	// ListOffsets: v0 (MaxNumOffsets) below 0.10.1, v1 from it.
	step("list offsets", func() (interface{}, error) {
		oldest, err := client.GetOffset(in.Prefilled, 0, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		newest, err := client.GetOffset(in.Prefilled, 0, sarama.OffsetNewest)
		if err != nil {
			return nil, err
		}
		return []int64{oldest, newest}, nil
	})

	// Produce: v0 (magic 0) by default, v2 (magic 1) from 0.10, v3+ (magic 2) from 0.11.
	step("produce", func() (interface{}, error) {
		producer, err := sarama.NewSyncProducerFromClient(client)
		if err != nil {
			return nil, err
		}
		defer producer.Close()
		var offsets []int64
		for i := 0; i < 3; i++ {
			_, off, err := producer.SendMessage(&sarama.ProducerMessage{Topic: topic, Partition: 0, Value: sarama.StringEncoder(fmt.Sprintf("p%d", i))})
			if err != nil {
				return nil, err
			}
			offsets = append(offsets, off)
		}
		return offsets, nil
	})

	// Fetch: v0 by default, v2 from 0.10, v4+ from 0.11.
	read := func(topic string, n int) (interface{}, error) {
		consumer, err := sarama.NewConsumerFromClient(client)
		if err != nil {
			return nil, err
		}
		defer consumer.Close()
		pc, err := consumer.ConsumePartition(topic, 0, sarama.OffsetOldest)
		if err != nil {
			return nil, err
		}
		defer pc.Close()
		var values []string
		for len(values) < n {
			select {
			case m := <-pc.Messages():
				values = append(values, string(m.Value))
			case e := <-pc.Errors():
				return nil, e
			case <-time.After(10 * time.Second):
				return nil, fmt.Errorf("read %d of %d records", len(values), n)
			}
		}
		return values, nil
	}
	step("fetch", func() (interface{}, error) { return read(in.Prefilled, in.Records) })
	if compression != "" {
		step("fetch produced", func() (interface{}, error) { return read(topic, 3) })
	}

	// OffsetManager: FindCoordinator v0, OffsetCommit v1 (always, in 1.22) and OffsetFetch v1.
	step("commit and fetch offsets", func() (interface{}, error) {
		commit := func(offset int64) error {
			om, err := sarama.NewOffsetManagerFromClient(in.Tag+"-om", client)
			if err != nil {
				return err
			}
			pom, err := om.ManagePartition(in.Prefilled, 0)
			if err != nil {
				return err
			}
			pom.MarkOffset(offset, "meta")
			if err := pom.Close(); err != nil {
				return err
			}
			return om.Close()
		}
		if err := commit(2); err != nil {
			return nil, err
		}
		om, err := sarama.NewOffsetManagerFromClient(in.Tag+"-om", client)
		if err != nil {
			return nil, err
		}
		defer om.Close()
		pom, err := om.ManagePartition(in.Prefilled, 0)
		if err != nil {
			return nil, err
		}
		defer pom.Close()
		next, meta := pom.NextOffset()
		return []interface{}{next, meta}, nil
	})

	if !conf.Version.IsAtLeast(sarama.V0_10_0_0) {
		// Sarama's admin client finds the controller with Metadata v1: not below 0.10.
		writeResults()
		return
	}
	admin, err := sarama.NewClusterAdmin(brokers, conf)
	if err != nil {
		panic(err)
	}
	defer admin.Close()
	adminTopic := in.Tag + "-admin"
	// Sarama refuses, before sending, a request its config.Version predates
	// (requiredVersion): those admin calls are run from the version that has them.
	since := func(v sarama.KafkaVersion, name string, fn func() (interface{}, error)) {
		if conf.Version.IsAtLeast(v) {
			step(name, fn)
		}
	}
	since(sarama.V0_10_1_0, "admin: create topic", func() (interface{}, error) {
		return nil, admin.CreateTopic(adminTopic, &sarama.TopicDetail{NumPartitions: 2, ReplicationFactor: 1, ConfigEntries: map[string]*string{"retention.ms": strp("3600000")}}, false)
	})
	step("admin: describe cluster", func() (interface{}, error) {
		brokers, controller, err := admin.DescribeCluster()
		if err != nil {
			return nil, err
		}
		return []int32{int32(len(brokers)), controller}, nil
	})
	// ListTopics describes each topic's configs (DescribeConfigs).
	since(sarama.V0_11_0_0, "admin: list topics", func() (interface{}, error) {
		topics, err := admin.ListTopics()
		if err != nil {
			return nil, err
		}
		d, ok := topics[adminTopic]
		if !ok {
			return nil, fmt.Errorf("%s not listed", adminTopic)
		}
		return []interface{}{d.NumPartitions, *d.ConfigEntries["retention.ms"]}, nil
	})
	since(sarama.V0_11_0_0, "admin: describe config", func() (interface{}, error) {
		entries, err := admin.DescribeConfig(sarama.ConfigResource{Type: sarama.TopicResource, Name: adminTopic, ConfigNames: []string{"retention.ms"}})
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for _, e := range entries {
			out[e.Name] = e.Value
		}
		return out, nil
	})
	since(sarama.V1_0_0_0, "admin: create partitions", func() (interface{}, error) {
		return nil, admin.CreatePartitions(adminTopic, 3, nil, false)
	})
	since(sarama.V0_11_0_0, "admin: delete records", func() (interface{}, error) {
		return nil, admin.DeleteRecords(in.Prefilled, map[int32]int64{0: 1})
	})
	step("admin: list consumer group offsets", func() (interface{}, error) {
		res, err := admin.ListConsumerGroupOffsets(in.Tag+"-om", map[string][]int32{in.Prefilled: {0}})
		if err != nil {
			return nil, err
		}
		b := res.GetBlock(in.Prefilled, 0)
		if b == nil {
			return nil, fmt.Errorf("no block")
		}
		return b.Offset, nil
	})
	since(sarama.V0_10_1_0, "admin: delete topic", func() (interface{}, error) {
		return nil, admin.DeleteTopic(adminTopic)
	})

	if conf.Version.IsAtLeast(sarama.V0_10_2_0) {
		// ConsumerGroup: JoinGroup v1 (v0 before 0.10.1), SyncGroup v0, Heartbeat v0, OffsetCommit v1.
		step("consumer group: consume and commit", func() (interface{}, error) {
			group, err := sarama.NewConsumerGroupFromClient(in.Tag+"-g", client)
			if err != nil {
				return nil, err
			}
			h := &handler{want: in.Records - 1, done: make(chan struct{})}
			go func() {
				for e := range group.Errors() {
					_ = e
				}
			}()
			stop := make(chan struct{})
			go func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					if err := group.Consume(contextBackground(), []string{in.Prefilled}, h); err != nil {
						return
					}
				}
			}()
			select {
			case <-h.done:
			case <-time.After(15 * time.Second):
				close(stop)
				group.Close()
				return nil, fmt.Errorf("consumed %d records", h.count)
			}
			close(stop)
			if err := group.Close(); err != nil {
				return nil, err
			}
			res, err := admin.ListConsumerGroupOffsets(in.Tag+"-g", map[string][]int32{in.Prefilled: {0}})
			if err != nil {
				return nil, err
			}
			return []int64{int64(h.count), res.GetBlock(in.Prefilled, 0).Offset}, nil
		})
		step("admin: describe consumer groups", func() (interface{}, error) {
			groups, err := admin.DescribeConsumerGroups([]string{in.Tag + "-g"})
			if err != nil {
				return nil, err
			}
			return []string{groups[0].State, groups[0].ProtocolType}, nil
		})
		step("admin: list consumer groups", func() (interface{}, error) {
			groups, err := admin.ListConsumerGroups()
			if err != nil {
				return nil, err
			}
			return groups[in.Tag+"-g"], nil
		})
	}
	writeResults()
}

func strp(s string) *string { return &s }

func writeResults() {
	if err := json.NewEncoder(os.Stdout).Encode(map[string]interface{}{"results": results}); err != nil {
		panic(err)
	}
}
