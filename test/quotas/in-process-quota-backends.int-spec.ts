import { InProcessConcurrencyLimiter } from '../../src/quotas/in-process-concurrency-limiter';
import { InProcessRateLimiter } from '../../src/quotas/in-process-rate-limiter';
import { testConcurrencyLimiter } from './concurrency-limiter.conformance';
import { testRateLimiter } from './rate-limiter.conformance';

// Per instance: no sibling shares these counts (that is what REDIS_URL is for).
testRateLimiter('in-process', { create: async () => new InProcessRateLimiter() });
testConcurrencyLimiter('in-process', { create: async () => new InProcessConcurrencyLimiter() });
