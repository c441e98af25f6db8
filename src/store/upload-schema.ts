/**
 * An upload's compile claim (several instances on one store): the instance compiling it and until
 * when the claim holds. A claim is taken in one guarded UPDATE, so two instances never compile one
 * upload; a claim whose instance died lapses at `claim_until` and another instance takes it.
 * Epoch milliseconds, as the lanes' leases.
 */
export const uploadClaimMigration = (epochMsType: 'bigint' | 'INTEGER') => `
  ALTER TABLE uploads ADD COLUMN claim_owner TEXT;
  ALTER TABLE uploads ADD COLUMN claim_until ${epochMsType};
  `;

/** An upload's compile diagnostics (errors and warnings, JSON; issue 27): NULL while pending and for older uploads. */
export const UPLOAD_DIAGNOSTICS_MIGRATION = `
  ALTER TABLE uploads ADD COLUMN diagnostics TEXT;
  `;
