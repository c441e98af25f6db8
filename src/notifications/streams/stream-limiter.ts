import { Inject, Injectable } from '@nestjs/common';
import { DomainError } from '../../common/domain-error';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { StreamSlot } from './tenant-stream-quota.port';

/** STREAM_MAX_PER_KEY and STREAM_MAX_PER_INSTANCE (tests give the two numbers as a plain object). */
@Injectable()
export class StreamLimits {
  /** Streams (WebSocket and SSE together) one API key may hold open at once. */
  readonly perKey: number;
  /** Streams this instance holds open at once, all keys together. */
  readonly perInstance: number;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'notifications'>) {
    this.perKey = config.notifications.maxStreamsPerKey;
    this.perInstance = config.notifications.maxStreamsPerInstance;
  }
}

export type StreamTransportKind = 'websocket' | 'sse';

/**
 * Counts open streams per API key (by its hash: two keys of one tenant count apart) and per
 * instance, across both transports. A stream takes its slot before its handshake or first byte and
 * gives it back when its socket closes, whatever closed it.
 */
@Injectable()
export class StreamLimiter {
  private total = 0;
  private readonly byKey = new Map<string, number>();
  /** Open streams by transport (the metrics' gauge); the limits count both together. */
  private readonly byTransport: Record<StreamTransportKind, number> = { websocket: 0, sse: 0 };

  constructor(private readonly limits: StreamLimits) {}

  /** Takes a slot for a stream of this key, or throws TOO_MANY_STREAMS (`limit`, `scope`). */
  acquire(keyHash: string, transport: StreamTransportKind = 'websocket'): StreamSlot {
    const held = this.byKey.get(keyHash) ?? 0;
    if (held >= this.limits.perKey) {
      throw tooMany(
        'key',
        this.limits.perKey,
        `this API key already has ${held} streams open, the most allowed (STREAM_MAX_PER_KEY); close one first`,
      );
    }
    if (this.total >= this.limits.perInstance) {
      throw tooMany(
        'instance',
        this.limits.perInstance,
        `this instance already holds ${this.total} streams, the most allowed (STREAM_MAX_PER_INSTANCE); retry later`,
      );
    }
    this.total++;
    this.byTransport[transport]++;
    this.byKey.set(keyHash, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total--;
      this.byTransport[transport]--;
      const left = (this.byKey.get(keyHash) ?? 1) - 1;
      if (left === 0) this.byKey.delete(keyHash);
      else this.byKey.set(keyHash, left);
    };
  }

  /** Open streams of this instance by transport. */
  countByTransport(): Record<StreamTransportKind, number> {
    return { ...this.byTransport };
  }

  /** Open streams of one key, or of the whole instance. */
  count(keyHash?: string): number {
    return keyHash === undefined ? this.total : (this.byKey.get(keyHash) ?? 0);
  }
}

function tooMany(scope: 'key' | 'instance', limit: number, message: string): DomainError {
  return new DomainError('TOO_MANY_STREAMS', message, { limit, scope });
}
