// Admin: configs, partitions, groups and lag, records, ACLs, the cluster.
package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/segmentio/kafka-go"
)

func configs(ctx context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	describe := func() (map[string]any, error) {
		res, err := client(bootstrap).DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic}}})
		if err != nil {
			return nil, err
		}
		r := res.Resources[0]
		if r.Error != nil {
			return nil, r.Error
		}
		out := map[string]any{}
		for _, n := range a.Names {
			for _, e := range r.ConfigEntries {
				if e.ConfigName == n {
					out[n] = map[string]any{"value": e.ConfigValue, "source": configSource(e.ConfigSource)}
				}
			}
		}
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	entries := []kafka.IncrementalAlterConfigsRequestConfig{}
	for k, v := range a.Set {
		entries = append(entries, kafka.IncrementalAlterConfigsRequestConfig{Name: k, Value: v, ConfigOperation: kafka.ConfigOperationSet})
	}
	res, err := client(bootstrap).IncrementalAlterConfigs(ctx, &kafka.IncrementalAlterConfigsRequest{Resources: []kafka.IncrementalAlterConfigsRequestResource{{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic, Configs: entries}}})
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(res.Resources[0].Error), "after": after}, nil
}

// configSource names DescribeConfigs' config_source as Kafka does (kafka-go reports the number).
func configSource(s int8) string {
	names := map[int8]string{1: "DYNAMIC_TOPIC_CONFIG", 2: "DYNAMIC_BROKER_CONFIG", 3: "DYNAMIC_DEFAULT_BROKER_CONFIG", 4: "STATIC_BROKER_CONFIG", 5: "DEFAULT_CONFIG", 6: "DYNAMIC_BROKER_LOGGER_CONFIG"}
	if n, ok := names[s]; ok {
		return n
	}
	return strconv.Itoa(int(s))
}

func partitions(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int    `json:"add"`
}) (any, error) {
	ps, err := partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	res, err := client(bootstrap).CreatePartitions(ctx, &kafka.CreatePartitionsRequest{Topics: []kafka.TopicPartitionsConfig{{Name: a.Topic, Count: int32(len(ps) + a.Add)}}})
	if err != nil {
		return nil, err
	}
	ps, err = partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(res.Errors[a.Topic]), "partitions": ps}, nil
}

// groups: a group Reader commits `consume` messages and stays joined while
// the client lists and describes groups; lag is end offsets less commits.
func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	r := groupReader(bootstrap, a.groupArgs)
	defer r.Close()
	for i := 0; i < a.Consume; i++ {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return nil, err
		}
		if err := r.CommitMessages(ctx, m); err != nil {
			return nil, err
		}
	}
	cl := client(bootstrap)
	listed, err := cl.ListGroups(ctx, &kafka.ListGroupsRequest{})
	if err != nil {
		return nil, err
	}
	names, protocolType := []string{}, ""
	for _, g := range listed.Groups {
		names = append(names, g.GroupID)
		if g.GroupID == a.Group {
			protocolType = g.ProtocolType
		}
	}
	described, err := cl.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{a.Group}})
	if err != nil {
		return nil, err
	}
	d := described.Groups[0]
	if d.Error != nil {
		return nil, d.Error
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		assigned := []int{}
		for _, t := range m.MemberAssignments.Topics {
			assigned = append(assigned, t.Partitions...)
		}
		members = append(members, map[string]any{"clientId": m.ClientID, "assigned": assigned})
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	ps, err := partitionsOf(ctx, bootstrap, a.Topic)
	if err != nil {
		return nil, err
	}
	reqs := []kafka.OffsetRequest{}
	for _, p := range ps {
		reqs = append(reqs, kafka.LastOffsetOf(p))
	}
	ends, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{a.Topic: reqs}})
	if err != nil {
		return nil, err
	}
	lag, total := map[int]int64{}, int64(0)
	for _, po := range ends.Topics[a.Topic] {
		lag[po.Partition] = po.LastOffset - committed[po.Partition]
		total += lag[po.Partition]
	}
	return map[string]any{"listed": names, "state": d.GroupState, "protocolType": protocolType, "members": members, "lag": lag, "totalLag": total}, nil
}

func acls(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	cl := client(bootstrap)
	entries := []kafka.ACLEntry{}
	for _, op := range []kafka.ACLOperationType{kafka.ACLOperationTypeRead, kafka.ACLOperationTypeDescribe} {
		entries = append(entries, kafka.ACLEntry{ResourceType: kafka.ResourceTypeTopic, ResourceName: a.Topic, ResourcePatternType: kafka.PatternTypeLiteral,
			Principal: a.Principal, Host: "*", Operation: op, PermissionType: kafka.ACLPermissionTypeAllow})
	}
	created, err := cl.CreateACLs(ctx, &kafka.CreateACLsRequest{ACLs: entries})
	if err != nil {
		return nil, err
	}
	codes := []int16{}
	for _, e := range created.Errors {
		codes = append(codes, code(e))
	}
	filter := kafka.ACLFilter{ResourceTypeFilter: kafka.ResourceTypeTopic, ResourceNameFilter: a.Topic, ResourcePatternTypeFilter: kafka.PatternTypeMatch,
		PrincipalFilter: a.Principal, Operation: kafka.ACLOperationTypeAny, PermissionType: kafka.ACLPermissionTypeAny}
	describe := func() ([]string, error) {
		res, err := cl.DescribeACLs(ctx, &kafka.DescribeACLsRequest{Filter: filter})
		if err != nil {
			return nil, err
		}
		if res.Error != nil {
			return nil, res.Error
		}
		out := []string{}
		for _, r := range res.Resources {
			for _, x := range r.ACLs {
				out = append(out, fmt.Sprintf("%s %s %s %s", r.ResourceName, x.Principal, opName(x.Operation), x.Host))
			}
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	del := filter
	del.ResourcePatternTypeFilter = kafka.PatternTypeLiteral
	deleted, err := cl.DeleteACLs(ctx, &kafka.DeleteACLsRequest{Filters: []kafka.DeleteACLsFilter{{ResourceTypeFilter: del.ResourceTypeFilter, ResourceNameFilter: del.ResourceNameFilter,
		ResourcePatternTypeFilter: del.ResourcePatternTypeFilter, PrincipalFilter: del.PrincipalFilter, Operation: del.Operation, PermissionType: del.PermissionType}}})
	if err != nil {
		return nil, err
	}
	n := 0
	for _, r := range deleted.Results {
		if r.Error != nil {
			return nil, r.Error
		}
		n += len(r.MatchingACLs)
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": codes, "described": before, "deleted": n, "after": after}, nil
}

func opName(op kafka.ACLOperationType) string {
	switch op {
	case kafka.ACLOperationTypeRead:
		return "READ"
	case kafka.ACLOperationTypeDescribe:
		return "DESCRIBE"
	}
	return strconv.Itoa(int(op))
}

// deleteGroups: OffsetDelete of one partition's commit (the group must be
// empty), then DeleteGroups; reports what is committed and listed after each.
func deleteGroups(ctx context.Context, bootstrap string, a struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
}) (any, error) {
	cl := client(bootstrap)
	del, err := cl.OffsetDelete(ctx, &kafka.OffsetDeleteRequest{GroupID: a.Group, Topics: map[string][]int{a.Topic: {a.Partition}}})
	if err != nil {
		return nil, err
	}
	delErr := del.Error
	for _, p := range del.Topics[a.Topic] {
		if p.Partition == a.Partition && delErr == nil {
			delErr = p.Error
		}
	}
	committed, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	dg, err := cl.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{a.Group}})
	if err != nil {
		return nil, err
	}
	listed, err := cl.ListGroups(ctx, &kafka.ListGroupsRequest{})
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, g := range listed.Groups {
		names = append(names, g.GroupID)
	}
	again, err := cl.DeleteGroups(ctx, &kafka.DeleteGroupsRequest{GroupIDs: []string{a.Group}})
	if err != nil {
		return nil, err
	}
	return map[string]any{"offsetDelete": code(delErr), "committedAfter": committed, "deleteGroup": code(dg.Errors[a.Group]),
		"listedAfter": names, "deleteAgain": code(again.Errors[a.Group])}, nil
}
