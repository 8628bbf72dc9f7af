// The checks every group API makes before the group's coordinator acts, in
// Kafka's order: the requester's ACL on the group (KafkaApis), then a group
// id the coordinator can keep, then this broker holding the group's
// coordinator slot (GroupCoordinatorService routing the request to the shard
// that owns the group). A handler asks once and gets the coordinator, or the
// error code to answer with.
import type { GroupCoordinator } from '../coordinator/group-coordinator.js';
import { isValidGroupId } from '../coordinator/group-types.js';
import { ErrorCode } from '../protocol/errors.js';
import { ResourceType, allowed } from './authorization.js';
import type { RequestContext } from './types.js';

export interface GroupRouting {
  /** The ACL operation the requester needs on the group; null when the handler has authorized the group itself (batched APIs). */
  operation: number | null;
  /**
   * How a group id this broker cannot keep ('' or one holding NUL) is
   * answered: INVALID_GROUP_ID ('refuse', the default); routed by its slot
   * like any other id and then found nowhere ('lookUp', DeleteGroups); or
   * described as a group that does not exist, whichever broker holds its
   * slot ('notFound', DescribeGroups); or, for the empty id only, served
   * like any other ('serveEmpty', OffsetCommit and OffsetFetch: Kafka keeps
   * offsets under it for old consumers; an id holding NUL is refused).
   */
  invalidGroupId?: 'refuse' | 'lookUp' | 'notFound' | 'serveEmpty';
}

/** The group coordinator that serves `groupId` here, or the error code the request is answered with. */
export function routeGroup(ctx: RequestContext, groupId: string, routing: GroupRouting): GroupCoordinator | number {
  if (routing.operation !== null && !allowed(ctx, routing.operation, ResourceType.GROUP, groupId)) return ErrorCode.GROUP_AUTHORIZATION_FAILED;
  if (!isValidGroupId(groupId) && !(groupId === '' && routing.invalidGroupId === 'serveEmpty')) {
    const mode = routing.invalidGroupId ?? 'refuse';
    if (mode === 'refuse' || mode === 'serveEmpty') return ErrorCode.INVALID_GROUP_ID;
    if (mode === 'notFound') return ctx.broker.groups;
  }
  if (!ctx.broker.coordination.owns(groupId)) return ErrorCode.NOT_COORDINATOR;
  return ctx.broker.groups;
}
