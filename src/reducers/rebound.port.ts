import { Binding } from '../store/reducer-state.port';

/**
 * Told after each bind: AggregateBinder calls it; ReducersModule binds it to StateCatchUp (drops the
 * keeper's states of the type, recomputes its snapshots), which itself depends on the binder's lookup.
 */
export abstract class Rebound {
  abstract rebound(binding: Binding): void;
}
