// DescribeCluster (key 60), v0-2. Used by the Java admin client.
// v1: endpoint type (brokers or controllers). v2: include fenced brokers.
import { DescribeClusterApi } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { AclOperation, NOT_REQUESTED, clusterAllowed, clusterAuthorizedOperations } from './authorization.js';
import { defineHandler } from './types.js';

const BROKER_ENDPOINTS = 1;

export default defineHandler({
  codec: DescribeClusterApi,
  minVersion: 0,
  maxVersion: 2,
  async handle(ctx, request) {
    const { broker } = ctx;
    if (request.endpointType !== BROKER_ENDPOINTS) {
      return {
        errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE,
        errorMessage: 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER',
        // Kafka's error answer keeps the defaults: broker endpoints, no cluster id.
        endpointType: BROKER_ENDPOINTS,
        clusterId: '',
      };
    }
    return {
      errorCode: ErrorCode.NONE,
      endpointType: BROKER_ENDPOINTS,
      clusterId: broker.clusterId,
      controllerId: broker.nodeId,
      brokers: broker.liveBrokers(ctx.listener).map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack, isFenced: false })),
      // Like Kafka: the operations are reported only to a principal that may describe the cluster.
      clusterAuthorizedOperations: !request.includeClusterAuthorizedOperations ? NOT_REQUESTED : clusterAllowed(ctx, AclOperation.DESCRIBE) ? clusterAuthorizedOperations(ctx) : 0,
    };
  },
});
