import { CheckResult } from './readiness';

/**
 * The Redis check, when REDIS_URL is set (null otherwise): HealthModule binds it to redisReadiness
 * (a PING on a connection of its own). Readiness runs it for GET /health/ready; MetricsModule's
 * ScrapeGauges asks up() for the eventstore_dependency_up gauge; HealthModule closes it at shutdown.
 */
export abstract class RedisCheck {
  /** The answer's key for this check's section. */
  abstract readonly name: string;
  abstract check(): Promise<CheckResult> | CheckResult;
  /** PINGs Redis now: true when it answers. */
  abstract up(): Promise<boolean>;
  abstract close(): Promise<void>;
}
