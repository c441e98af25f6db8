import { createHash } from 'crypto';
import { migrations } from './migrations';

const SQLITE_MIGRATIONS = migrations('sqlite');
const POSTGRES_MIGRATIONS = migrations('postgres');

/**
 * A migration once shipped is never edited: the migrations table records only its version (its
 * index), so an existing database never re-runs it, and a changed text would leave old and new
 * databases with different schemas. These are the shipped texts' digests, per dialect.
 */
const SHIPPED = {
  sqlite: [
    'e83ee9d1ad762780',
    '443be06d69ca0ae0',
    'f5abf76f5f2a69ce',
    'ece3a9ae6cc86743',
    '79e5c506405b14cf',
    '4c31b9678ecef488',
    '18228e8a8183b7e1',
    '0abcbc6142bc9fd4',
    '28c22ddf5e2e85df',
    '6bce73203e7805f9',
    '29da702fb78d5e30',
    '009b053383fe6bab',
    '630858cf3d090c64',
    '5544d67000782548',
    'ecdd0c70eaa0b752',
    '8ea4dfd186d2c578',
    '698e56a7fc003370',
    '90d471e1ec8c04bc',
    '229e943a9b63087e',
    '834c76dbcfa24ab5',
  ],
  postgres: [
    '4b9fa63eb3a38d66',
    '638547f310dce552',
    'ff300217f4f8c10d',
    '56d32a02df06ecb3',
    '4516e70e7e45d06d',
    '3f903e7d0c2eac74',
    '18228e8a8183b7e1',
    '0abcbc6142bc9fd4',
    '717f74d77fb25a34',
    '55b7f0ad51d71b52',
    '89daf5807586ea23',
    'cd58724fae7b87c8',
    '630858cf3d090c64',
    'b14640aab31c9f29',
    '77b2bb104b4458d0',
    '27c0ce28aab07f79',
    '698e56a7fc003370',
    '90d471e1ec8c04bc',
    '9575475e7f420052',
    '9015a88f1e1a4891',
  ],
};

const digest = (sql: string): string => createHash('sha256').update(sql).digest('hex').slice(0, 16);

describe('migrations', () => {
  it('renders every shipped SQLite migration exactly as shipped', () => {
    expect(SQLITE_MIGRATIONS.slice(0, SHIPPED.sqlite.length).map(digest)).toEqual(SHIPPED.sqlite);
  });

  it('renders every shipped PostgreSQL migration exactly as shipped', () => {
    expect(POSTGRES_MIGRATIONS.slice(0, SHIPPED.postgres.length).map(digest)).toEqual(SHIPPED.postgres);
  });
});
