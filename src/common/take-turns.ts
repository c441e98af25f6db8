/**
 * Round robin over lists: the first of each, then the second of each, … up to `limit` items. The
 * lists keep their own order; a list that runs out leaves its turns to the others.
 */
export function takeTurns<T>(lists: T[][], limit: number): T[] {
  const out: T[] = [];
  for (let round = 0; out.length < limit; round++) {
    let any = false;
    for (const list of lists) {
      if (round >= list.length) continue;
      any = true;
      out.push(list[round]);
      if (out.length === limit) break;
    }
    if (!any) break;
  }
  return out;
}
