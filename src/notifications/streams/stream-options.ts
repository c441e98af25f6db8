import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

/** Notifications (or events) a stream connection reads, and writes to its socket, at a time. */
const STREAM_PAGE = 200;

/** How the streams of both transports run, from the config (tests give the four numbers as a plain object). */
@Injectable()
export class StreamOptions {
  /** Items read from the store at a time: the most a connection holds beyond its transport buffer. */
  readonly pageSize: number;
  /** WebSocket: interval of `{"type":"ping"}`; a client without a pong by the next ping is closed. */
  readonly pingIntervalMs: number;
  /** SSE: interval of the `: ping` comment that keeps proxies from timing out an idle stream. */
  readonly heartbeatMs: number;
  /** Bytes queued on a socket or response beyond which the client counts as too slow and is cut off. */
  readonly maxBufferedBytes: number;

  constructor(@Inject(APP_CONFIG) config: Pick<AppConfig, 'notifications'>) {
    this.pageSize = STREAM_PAGE;
    this.pingIntervalMs = config.notifications.pingMs;
    this.heartbeatMs = config.notifications.sseHeartbeatMs;
    this.maxBufferedBytes = config.notifications.maxBufferedBytes;
  }
}
