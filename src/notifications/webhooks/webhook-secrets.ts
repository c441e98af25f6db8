import { TENANT_SCOPE, WebhookSecretRecord } from '../../store/webhook-records';
import { WebhookSecretStore } from '../../store/webhook-secret-store.port';
import { SecretCipher } from './secret-cipher';
import { generateWebhookSecret } from './webhook-signer';

/**
 * The tenant's shared secret and projections' isolated ones. Stored sealed (SecretCipher); the
 * plain text leaves only in the upload and rotation responses and in signatures. After a
 * rotation the previous secret still signs for `overlapMs`, so receivers can switch without
 * refusing a message.
 */
export class WebhookSecrets {
  constructor(
    private readonly repo: WebhookSecretStore,
    private readonly cipher: SecretCipher,
    private readonly overlapMs: number,
  ) {}

  private changes = 0;

  /**
   * Counts the rotations and new isolated secrets so far. A signer that caches secrets (the
   * dispatcher's targets) keeps an entry only while this is what it was when read, so the next
   * delivery after a rotation is signed with the new secret.
   */
  get generation(): number {
    return this.changes;
  }

  async tenantSecret(tenantId: string): Promise<string> {
    return this.cipher.decrypt((await this.tenantRecord(tenantId)).secret);
  }

  /** The shared secret's record, made on first use. */
  private async tenantRecord(tenantId: string): Promise<WebhookSecretRecord> {
    const stored = await this.repo.getSecret(tenantId, TENANT_SCOPE);
    if (stored) return stored;
    // Two first uses at once: one insert wins and both answer what is stored.
    return this.repo.ensureSecret(tenantId, TENANT_SCOPE, this.cipher.encrypt(generateWebhookSecret()), Date.now());
  }

  /** A new isolated secret for an upload: shown in its response, bound to the projection at deploy. */
  newIsolated(): { plain: string; sealed: string } {
    const plain = generateWebhookSecret();
    return { plain, sealed: this.cipher.encrypt(plain) };
  }

  /** A deploy with its own secret: it becomes the projection's, the one it replaces overlapping. */
  async bindIsolated(tenantId: string, projectionId: string, sealed: string): Promise<void> {
    const now = Date.now();
    const current = await this.repo.getSecret(tenantId, projectionId);
    if (current && this.cipher.decrypt(current.secret) === this.cipher.decrypt(sealed)) return;
    await this.repo.replaceSecret(tenantId, projectionId, sealed, now, now + this.overlapMs);
    this.changes++;
  }

  /** `scope`: TENANT_SCOPE or a projectionId with an isolated secret. */
  async rotate(tenantId: string, scope: string): Promise<{ secret: string; rotatedAt: number }> {
    const plain = generateWebhookSecret();
    const now = Date.now();
    const r = await this.repo.replaceSecret(tenantId, scope, this.cipher.encrypt(plain), now, now + this.overlapMs);
    this.changes++;
    return { secret: plain, rotatedAt: r.rotatedAt };
  }

  /** Every secret a delivery is signed with now: the current one, and the previous during the overlap. */
  async signing(tenantId: string, projectionId: string, isolated: boolean, now = Date.now()): Promise<string[]> {
    const r = isolated ? await this.repo.getSecret(tenantId, projectionId) : await this.tenantRecord(tenantId);
    if (!r) return [];
    const secrets = [this.cipher.decrypt(r.secret)];
    if (r.previousSecret && r.previousUntil !== null && r.previousUntil > now) secrets.push(this.cipher.decrypt(r.previousSecret));
    return secrets;
  }
}
