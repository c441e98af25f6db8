import { redactSecrets } from '../common/redact';
import { Store } from '../store/store.port';
import { ReadinessCheck } from './readiness';

/**
 * The store accepts a real write (Store.probeWrite: a committed write the way appends write), not
 * only a connection: a full disk, a deleted SQLite file or a read-only PostgreSQL all fail it.
 */
export function storeReadiness(store: Store): ReadinessCheck {
  return {
    name: 'store',
    check: async () => {
      try {
        await store.probeWrite();
        return { ready: true, detail: { kind: store.kind, writable: true } };
      } catch (e) {
        // A driver's message may quote the connection string; it is said without its secrets.
        return {
          ready: false,
          detail: { kind: store.kind, writable: false, error: redactSecrets(e instanceof Error ? e.message : String(e)) },
        };
      }
    },
  };
}
