import { describe, expect, it } from 'vitest';
import { CLASSIC_GROUP_STATES, VALID_PREVIOUS_STATES, assertValidTransition, type ClassicGroupState } from '../../src/coordinator/classic-group-state.js';

// Kafka's ClassicGroupState.validPreviousStates, written out move by move.
const KAFKA_MOVES: [ClassicGroupState, ClassicGroupState][] = [
  ['PreparingRebalance', 'Empty'],
  ['Stable', 'PreparingRebalance'],
  ['CompletingRebalance', 'PreparingRebalance'],
  ['Empty', 'PreparingRebalance'],
  ['PreparingRebalance', 'CompletingRebalance'],
  ['CompletingRebalance', 'Stable'],
  ['Stable', 'Dead'],
  ['PreparingRebalance', 'Dead'],
  ['CompletingRebalance', 'Dead'],
  ['Empty', 'Dead'],
  ['Dead', 'Dead'],
];

describe('the classic group states', () => {
  it('allow exactly the moves Kafka allows', () => {
    const allowed = CLASSIC_GROUP_STATES.flatMap((to) => [...VALID_PREVIOUS_STATES[to]].map((from) => `${from} -> ${to}`));
    expect(allowed.sort()).toEqual(KAFKA_MOVES.map(([from, to]) => `${from} -> ${to}`).sort());
  });

  it('refuse every other move, naming the group and both states', () => {
    const allowed = new Set(KAFKA_MOVES.map(([from, to]) => `${from} -> ${to}`));
    let refused = 0;
    for (const from of CLASSIC_GROUP_STATES) {
      for (const to of CLASSIC_GROUP_STATES) {
        if (allowed.has(`${from} -> ${to}`)) {
          expect(() => assertValidTransition('g', from, to)).not.toThrow();
        } else {
          expect(() => assertValidTransition('g', from, to)).toThrow(new RegExp(`group g .* before moving to ${to}; it is ${from}`));
          refused++;
        }
      }
    }
    // Among them: nothing leaves Dead, and a group reaches Stable only through CompletingRebalance.
    expect(refused).toBe(25 - KAFKA_MOVES.length);
    expect(() => assertValidTransition('g', 'Dead', 'Empty')).toThrow();
    expect(() => assertValidTransition('g', 'Empty', 'Stable')).toThrow();
  });
});
