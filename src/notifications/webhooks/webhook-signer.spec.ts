import { createHmac } from 'node:crypto';
import { generateWebhookSecret, WebhookSigner } from './webhook-signer';

describe('WebhookSigner', () => {
  const msgId = 'msg_2VfQm3k1';
  const ts = 1_700_000_000;
  const body = '{"type":"state_changed","sequence":7}';

  it('matches an HMAC computed directly from the spec’s recipe', () => {
    const secret = generateWebhookSecret();
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${msgId}.${ts}.${body}`).digest('base64');
    expect(WebhookSigner.sign([secret], msgId, ts, body)).toBe(`v1,${expected}`);
  });

  it('matches the example published with Standard Webhooks', () => {
    const sig = WebhookSigner.sign(
      ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1614265330,
      '{"test": 2432232314}',
    );
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('uses a secret without the whsec_ prefix as base64 too', () => {
    const secret = generateWebhookSecret();
    expect(WebhookSigner.sign([secret.slice(6)], msgId, ts, body)).toBe(WebhookSigner.sign([secret], msgId, ts, body));
  });

  it('generates a prefixed secret of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });

  it('signs with every secret of a rotation, and either verifies', () => {
    const [oldSecret, newSecret] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = WebhookSigner.headers([oldSecret, newSecret], msgId, ts, body);
    expect(Object.keys(headers).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp']);
    expect(headers['webhook-id']).toBe(msgId);
    expect(headers['webhook-timestamp']).toBe(String(ts));
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(WebhookSigner.verify(oldSecret, headers, body, 300, ts)).toBe(true);
    expect(WebhookSigner.verify(newSecret, headers, body, 300, ts)).toBe(true);
    expect(WebhookSigner.verify(generateWebhookSecret(), headers, body, 300, ts)).toBe(false);
  });

  it('verifies headers whatever their case', () => {
    const secret = generateWebhookSecret();
    const h = WebhookSigner.headers([secret], msgId, ts, body);
    const shouted = {
      'Webhook-Id': h['webhook-id'],
      'Webhook-Timestamp': h['webhook-timestamp'],
      'Webhook-Signature': h['webhook-signature'],
    };
    expect(WebhookSigner.verify(secret, shouted, body, 300, ts)).toBe(true);
  });

  describe('refuses', () => {
    const secret = generateWebhookSecret();
    const h = WebhookSigner.headers([secret], msgId, ts, body);

    it('a tampered body', () => {
      expect(WebhookSigner.verify(secret, h, body.replace('7', '8'), 300, ts)).toBe(false);
    });

    it('a tampered timestamp or id', () => {
      expect(WebhookSigner.verify(secret, { ...h, 'webhook-timestamp': String(ts + 1) }, body, 300, ts)).toBe(false);
      expect(WebhookSigner.verify(secret, { ...h, 'webhook-id': 'msg_other' }, body, 300, ts)).toBe(false);
    });

    it('a timestamp outside the tolerance, either way', () => {
      expect(WebhookSigner.verify(secret, h, body, 300, ts + 300)).toBe(true);
      expect(WebhookSigner.verify(secret, h, body, 300, ts + 301)).toBe(false);
      expect(WebhookSigner.verify(secret, h, body, 300, ts - 301)).toBe(false);
    });

    it('missing or malformed headers and unknown signature versions', () => {
      expect(WebhookSigner.verify(secret, { ...h, 'webhook-signature': undefined }, body, 300, ts)).toBe(false);
      expect(WebhookSigner.verify(secret, { ...h, 'webhook-id': '' }, body, 300, ts)).toBe(false);
      expect(WebhookSigner.verify(secret, { ...h, 'webhook-timestamp': `${ts}.5` }, body, 300, ts)).toBe(false);
      const v2 = h['webhook-signature'].replace('v1,', 'v2,');
      expect(WebhookSigner.verify(secret, { ...h, 'webhook-signature': v2 }, body, 300, ts)).toBe(false);
    });
  });

  it('refuses to sign without a secret or with a fractional timestamp', () => {
    expect(() => WebhookSigner.sign([], msgId, ts, body)).toThrow(/secret/);
    expect(() => WebhookSigner.sign([generateWebhookSecret()], msgId, ts + 0.5, body)).toThrow(RangeError);
  });
});
