// Admin: configs, partitions, groups and lag, records, ACLs, the cluster.
package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func configs(ctx context.Context, bootstrap string, a struct {
	Topic string            `json:"topic"`
	Set   map[string]string `json:"set"`
	Names []string          `json:"names"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	describe := func() (map[string]any, error) {
		rc, err := adm.DescribeTopicConfigs(ctx, a.Topic)
		if err != nil {
			return nil, err
		}
		c, err := rc.On(a.Topic, nil)
		if err != nil {
			return nil, err
		}
		if c.Err != nil {
			return nil, c.Err
		}
		out := map[string]any{}
		for _, n := range a.Names {
			for _, e := range c.Configs {
				if e.Key == n {
					out[n] = map[string]any{"value": e.Value, "source": e.Source.String()}
				}
			}
		}
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	alter := []kadm.AlterConfig{}
	for k, v := range a.Set {
		alter = append(alter, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: &v})
	}
	res, err := adm.AlterTopicConfigs(ctx, alter, a.Topic)
	if err != nil {
		return nil, err
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"before": before, "alter": code(res[0].Err), "after": after}, nil
}

func partitions(ctx context.Context, bootstrap string, a struct {
	Topic string `json:"topic"`
	Add   int    `json:"add"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	res, err := adm.CreatePartitions(ctx, a.Add, a.Topic)
	if err != nil {
		return nil, err
	}
	md, err := adm.Metadata(ctx, a.Topic)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": code(res[a.Topic].Err), "partitions": md.Topics[a.Topic].Partitions.Numbers()}, nil
}

// groups: a member of the group stays joined while the admin lists and
// describes groups and computes the group's lag.
func groups(ctx context.Context, bootstrap string, a struct {
	groupArgs
	Consume int `json:"consume"`
}) (any, error) {
	cl, err := client(bootstrap, kgo.ConsumerGroup(a.Group), kgo.ConsumeTopics(a.Topic), kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(300*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	got := 0
	for got < a.Consume {
		fs := cl.PollRecords(ctx, a.Consume-got)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		got += fs.NumRecords()
		// Commit exactly what was read: the lag is what is left.
		if err := cl.CommitRecords(ctx, fs.Records()...); err != nil {
			return nil, err
		}
	}
	adm := kadm.NewClient(cl)
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	described, err := adm.DescribeGroups(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	d := described[a.Group]
	if d.Err != nil {
		return nil, d.Err
	}
	members := []map[string]any{}
	for _, m := range d.Members {
		ca, _ := m.Assigned.AsConsumer()
		assigned := []int32{}
		if ca != nil {
			for _, t := range ca.Topics {
				assigned = append(assigned, t.Partitions...)
			}
		}
		members = append(members, map[string]any{"clientId": m.ClientID, "assigned": assigned})
	}
	lags, err := adm.Lag(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	lag := map[int32]int64{}
	for _, l := range lags[a.Group].Lag[a.Topic] {
		lag[l.Partition] = l.Lag
	}
	return map[string]any{"listed": listed.Groups(), "state": d.State, "protocolType": d.ProtocolType, "protocol": d.Protocol,
		"members": members, "lag": lag, "totalLag": lags[a.Group].Lag.Total()}, nil
}

func deleteRecords(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    int64  `json:"before"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	os := kadm.Offsets{}
	os.AddOffset(a.Topic, a.Partition, a.Before, -1)
	res, err := adm.DeleteRecords(ctx, os)
	if err != nil {
		return nil, err
	}
	r, _ := res.Lookup(a.Topic, a.Partition)
	starts, err := adm.ListStartOffsets(ctx, a.Topic)
	if err != nil {
		return nil, err
	}
	s, _ := starts.Lookup(a.Topic, a.Partition)
	return map[string]any{"error": code(r.Err), "lowWatermark": r.LowWatermark, "start": s.Offset}, nil
}

// acls creates an ACL, describes it, deletes it and describes again.
func acls(ctx context.Context, bootstrap string, a struct {
	Topic     string `json:"topic"`
	Principal string `json:"principal"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	b := kadm.NewACLs().Allow(a.Principal).AllowHosts("*").Topics(a.Topic).ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpRead, kadm.OpDescribe)
	created, err := adm.CreateACLs(ctx, b)
	if err != nil {
		return nil, err
	}
	createErrs := []int16{}
	for _, c := range created {
		createErrs = append(createErrs, code(c.Err))
	}
	describe := func() ([]string, error) {
		d := kadm.NewACLs().Allow(a.Principal).AllowHosts().Topics(a.Topic).ResourcePatternType(kadm.ACLPatternMatch).Operations(kadm.OpAny)
		d.DenyHosts()
		res, err := adm.DescribeACLs(ctx, d)
		if err != nil {
			return nil, err
		}
		out := []string{}
		for _, r := range res {
			if r.Err != nil {
				return nil, r.Err
			}
			for _, x := range r.Described {
				out = append(out, fmt.Sprintf("%s %s %s %s %s %s", x.Type, x.Name, x.Pattern, x.Principal, x.Operation, x.Permission))
			}
		}
		sort.Strings(out)
		return out, nil
	}
	before, err := describe()
	if err != nil {
		return nil, err
	}
	del := kadm.NewACLs().Allow(a.Principal).AllowHosts("*").Topics(a.Topic).ResourcePatternType(kadm.ACLPatternLiteral).Operations(kadm.OpAny)
	deleted, err := adm.DeleteACLs(ctx, del)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, d := range deleted {
		if d.Err != nil {
			return nil, d.Err
		}
		n += len(d.Deleted)
	}
	after, err := describe()
	if err != nil {
		return nil, err
	}
	return map[string]any{"created": createErrs, "described": before, "deleted": n, "after": after}, nil
}

// cluster: DescribeCluster (raw kmsg; kadm describes brokers from Metadata) and kadm's broker list.
func cluster(ctx context.Context, bootstrap string, _ struct{}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeClusterRequest()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, err
	}
	brokers := []map[string]any{}
	for _, b := range resp.Brokers {
		brokers = append(brokers, map[string]any{"id": b.NodeID, "host": b.Host, "port": b.Port})
	}
	listed, err := adm.ListBrokers(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"error": resp.ErrorCode, "clusterId": resp.ClusterID, "controller": resp.ControllerID, "brokers": brokers, "listed": listed.NodeIDs()}, nil
}

// deleteGroups: OffsetDelete of one partition's commit (the group must be
// empty), then DeleteGroups; reports what is committed and listed after each.
func deleteGroups(ctx context.Context, bootstrap string, a struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}) (any, error) {
	adm, cl, err := admin(bootstrap)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	del, err := adm.DeleteOffsets(ctx, a.Group, kadm.TopicsSet{a.Topic: {a.Partition: {}}})
	if err != nil {
		return nil, err
	}
	delErr, _ := del.Lookup(a.Topic, a.Partition)
	afterOffsets, err := committedOffsets(ctx, bootstrap, a.Group, a.Topic)
	if err != nil {
		return nil, err
	}
	dg, err := adm.DeleteGroups(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, err
	}
	// Deleting again: the group is gone (GROUP_ID_NOT_FOUND).
	again, err := adm.DeleteGroups(ctx, a.Group)
	if err != nil {
		return nil, err
	}
	return map[string]any{"offsetDelete": code(delErr), "committedAfter": afterOffsets, "deleteGroup": code(dg[a.Group].Err),
		"listedAfter": listed.Groups(), "deleteAgain": code(again[a.Group].Err)}, nil
}
