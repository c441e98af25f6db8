import { describeWebhookStore, inMemoryWebhookFixture, WebhookFixture } from './webhook-store.conformance';

// The same suite as the SQL stores run (event-store.conformance.ts), on the in-memory adapter.
describe('in-memory store conformance', () => {
  let fixture: WebhookFixture;
  beforeEach(() => {
    fixture = inMemoryWebhookFixture();
  });
  describeWebhookStore(() => fixture);
});
