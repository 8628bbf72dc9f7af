// The states of a classic group and the moves between them, as Kafka's
// ClassicGroupState.validPreviousStates: every transition is checked against
// the table, so a move Kafka's coordinator never makes is a bug caught where
// it happens, not a group left in a state no client can leave.
export type ClassicGroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';
export const CLASSIC_GROUP_STATES: readonly ClassicGroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

/** The states a group must be in to move to each state. */
export const VALID_PREVIOUS_STATES: Readonly<Record<ClassicGroupState, ReadonlySet<ClassicGroupState>>> = {
  Empty: new Set(['PreparingRebalance']),
  PreparingRebalance: new Set(['Stable', 'CompletingRebalance', 'Empty']),
  CompletingRebalance: new Set(['PreparingRebalance']),
  Stable: new Set(['CompletingRebalance']),
  Dead: new Set(['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead']),
};

/** Throws on a move the table does not allow (an internal error: no request can cause it). */
export function assertValidTransition(groupId: string, from: ClassicGroupState, to: ClassicGroupState): void {
  if (!VALID_PREVIOUS_STATES[to].has(from)) {
    throw new Error(`group ${groupId} should be in one of ${[...VALID_PREVIOUS_STATES[to]].join(', ')} before moving to ${to}; it is ${from}`);
  }
}
