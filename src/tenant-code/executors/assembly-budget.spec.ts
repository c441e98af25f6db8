import { AssemblyBudget, BudgetEntry } from './assembly-budget';

const entry = (key: string, bytes = 10, pins = 0): BudgetEntry => ({ key, bytes, pins });

describe('AssemblyBudget', () => {
  it('unloads the least recently used past the count', () => {
    const b = new AssemblyBudget({ maxCount: 3, maxBytes: 1e9 });
    const [x, y, z] = [entry('x'), entry('y'), entry('z')];
    for (const e of [x, y, z]) b.add(e);
    expect(b.victims(10)).toEqual([x]);
    b.touch(x);
    expect(b.victims(10)).toEqual([y]);
  });

  it('unloads as many as the bytes need', () => {
    const b = new AssemblyBudget({ maxCount: 100, maxBytes: 100 });
    const [x, y, z] = [entry('x', 40), entry('y', 40), entry('z', 20)];
    for (const e of [x, y, z]) b.add(e);
    expect(b.bytes).toBe(100);
    expect(b.victims(50)).toEqual([x, y]);
    expect(b.victims(0)).toEqual([]);
  });

  it('never picks an assembly a call is waiting for, nor the one being loaded', () => {
    const b = new AssemblyBudget({ maxCount: 2, maxBytes: 1e9 });
    const [x, y] = [entry('x', 10, 1), entry('y')];
    b.add(x);
    b.add(y);
    expect(b.victims(10)).toEqual([y]);
    expect(b.victims(10, y)).toEqual([]);
  });

  it('counts what it holds', () => {
    const b = new AssemblyBudget({ maxCount: 2, maxBytes: 1e9 });
    b.add(entry('x', 7));
    b.add(entry('x', 9));
    expect([b.count, b.bytes]).toEqual([1, 9]);
    b.remove('x');
    expect([b.count, b.bytes]).toEqual([0, 0]);
  });
});
