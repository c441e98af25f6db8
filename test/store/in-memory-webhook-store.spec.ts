import { describeEventWebhookStore, EventWebhookFixture, inMemoryEventWebhookFixture } from './event-webhook-store.conformance';
import { describeWebhookStore, inMemoryWebhookFixture, WebhookFixture } from './webhook-store.conformance';

// The same suites as the SQL stores run (event-store.conformance.ts), on the in-memory adapters.
describe('in-memory store conformance', () => {
  let webhooks: WebhookFixture;
  let eventWebhooks: EventWebhookFixture;
  beforeEach(() => {
    webhooks = inMemoryWebhookFixture();
    eventWebhooks = inMemoryEventWebhookFixture();
  });
  describeWebhookStore(() => webhooks);
  describeEventWebhookStore(() => eventWebhooks);
});
