// Admin: configs, partitions, groups and lag, records, ACLs, the cluster.
package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

func configs(ctx context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	describe := func() (map[string]any, error) {
		res, err := ad.DescribeConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: a.Topic}})
		if err != nil {
			return nil, err
		}
		if res[0].Error.Code() != kafka.ErrNoError {
			return nil, res[0].Error
		}
		out := map[string]any{}
		for _, n := range a.Names {
			if e, ok := res[0].Config[n]; ok {
				out[n] = map[string]any{"value": e.Value, "source": e.Source.String()}
			}
		}
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	entries := []kafka.ConfigEntry{}
	for k, v := range a.Set {
		entries = append(entries, kafka.ConfigEntry{Name: k, Value: v, IncrementalOperation: kafka.AlterConfigOpTypeSet})
	}
	res, err := ad.IncrementalAlterConfigs(ctx, []kafka.ConfigResource{{Type: kafka.ResourceTopic, Name: a.Topic, Config: entries}})
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(res[0].Error), "after": after}, nil
}

func partitions(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int    `json:"add"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	count := func() ([]int32, error) {
		md, err := ad.GetMetadata(&a.Topic, false, 10000)
		if err != nil {
			return nil, err
		}
		ids := []int32{}
		for _, p := range md.Topics[a.Topic].Partitions {
			ids = append(ids, p.ID)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		return ids, nil
	}
	ids, err := count()
	if err != nil {
		return nil, err
	}
	res, err := ad.CreatePartitions(ctx, []kafka.PartitionsSpecification{{Topic: a.Topic, IncreaseTo: len(ids) + a.Add}})
	if err != nil {
		return nil, err
	}
	ids, err = count()
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(res[0].Error), "partitions": ids}, nil
}

func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	c, err := groupConsumer(bootstrap, a.groupArgs, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Subscribe(a.Topic, nil); err != nil {
		return nil, err
	}
	for got := 0; got < a.Consume; {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if m, ok := c.Poll(200).(*kafka.Message); ok {
			if _, err := c.CommitMessage(m); err != nil {
				return nil, err
			}
			got++
		}
	}
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	listed, err := ad.ListConsumerGroups(ctx)
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, g := range listed.Valid {
		names = append(names, g.GroupID)
	}
	described, err := ad.DescribeConsumerGroups(ctx, []string{a.Group})
	if err != nil {
		return nil, err
	}
	d := described.ConsumerGroupDescriptions[0]
	if d.Error.Code() != kafka.ErrNoError {
		return nil, d.Error
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		assigned := []int32{}
		for _, tp := range m.Assignment.TopicPartitions {
			assigned = append(assigned, tp.Partition)
		}
		members = append(members, map[string]any{"clientId": m.ClientID, "assigned": assigned})
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	md, err := c.GetMetadata(&a.Topic, false, 10000)
	if err != nil {
		return nil, err
	}
	lag, total := map[int32]int64{}, int64(0)
	for _, pm := range md.Topics[a.Topic].Partitions {
		p := pm.ID
		_, hi, err := c.QueryWatermarkOffsets(a.Topic, p, 10000)
		if err != nil {
			return nil, err
		}
		lag[p] = hi - committed[p]
		total += lag[p]
	}
	// Title case, as Kafka names the state ("Stable"); librdkafka's names are upper case.
	state := d.State.String()
	state = strings.ToUpper(state[:1]) + strings.ToLower(state[1:])
	return map[string]any{"listed": names, "state": state, "protocolType": nil, "protocol": d.PartitionAssignor,
		"members": members, "lag": lag, "totalLag": total}, nil
}

func deleteRecords(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    int64  `json:"before"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	res, err := ad.DeleteRecords(ctx, []kafka.TopicPartition{{Topic: &a.Topic, Partition: a.Partition, Offset: kafka.Offset(a.Before)}})
	if err != nil {
		return nil, err
	}
	r := res.DeleteRecordsResults[0]
	var low any
	if r.DeletedRecords != nil {
		low = int64(r.DeletedRecords.LowWatermark)
	}
	c, err := kafka.NewConsumer(conf(bootstrap, kafka.ConfigMap{"group.id": "compat-unused"}))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	lo, _, err := c.QueryWatermarkOffsets(a.Topic, a.Partition, 10000)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(r.TopicPartition.Error), "lowWatermark": low, "start": lo}, nil
}

func acls(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	bindings := kafka.ACLBindings{}
	for _, op := range []kafka.ACLOperation{kafka.ACLOperationRead, kafka.ACLOperationDescribe} {
		bindings = append(bindings, kafka.ACLBinding{Type: kafka.ResourceTopic, Name: a.Topic, ResourcePatternType: kafka.ResourcePatternTypeLiteral,
			Principal: a.Principal, Host: "*", Operation: op, PermissionType: kafka.ACLPermissionTypeAllow})
	}
	created, err := ad.CreateACLs(ctx, bindings)
	if err != nil {
		return nil, err
	}
	codes := []int16{}
	for _, c := range created {
		codes = append(codes, code(c.Error))
	}
	filter := kafka.ACLBindingFilter{Type: kafka.ResourceTopic, Name: a.Topic, ResourcePatternType: kafka.ResourcePatternTypeMatch,
		Principal: a.Principal, Operation: kafka.ACLOperationAny, PermissionType: kafka.ACLPermissionTypeAny}
	describe := func() ([]string, error) {
		res, err := ad.DescribeACLs(ctx, filter)
		if err != nil {
			return nil, err
		}
		if res.Error.Code() != kafka.ErrNoError {
			return nil, res.Error
		}
		out := []string{}
		for _, b := range res.ACLBindings {
			out = append(out, strings.ToUpper(fmt.Sprintf("%s %s %s %s", b.Name, b.Principal, b.Operation, b.Host)))
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	del := filter
	del.ResourcePatternType = kafka.ResourcePatternTypeLiteral
	deleted, err := ad.DeleteACLs(ctx, kafka.ACLBindingFilters{del})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, d := range deleted {
		if d.Error.Code() != kafka.ErrNoError {
			return nil, d.Error
		}
		n += len(d.ACLBindings)
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": codes, "described": before, "deleted": n, "after": after}, nil
}

func cluster(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	ad, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer ad.Close()
	res, err := ad.DescribeCluster(ctx)
	if err != nil {
		return nil, err
	}
	brokers, ids := []map[string]any{}, []int{}
	for _, n := range res.Nodes {
		brokers = append(brokers, map[string]any{"id": n.ID, "host": n.Host, "port": n.Port})
		ids = append(ids, n.ID)
	}
	id, controller := "", -1
	if res.ClusterID != nil {
		id = *res.ClusterID
	}
	if res.Controller != nil {
		controller = res.Controller.ID
	}
	return map[string]any{"error": 0, "clusterId": id, "controller": controller, "brokers": brokers, "listed": ids}, nil
}
