/**
 * The three worked examples of docs/dcb.md, as a client writes them: read by query, decide, append
 * with the condition `after` = the read's position, and on `409 APPEND_CONDITION_FAILED` read and
 * decide again. docs/dcb.md shows this code; test/e2e/dcb-examples.e2e-spec.ts and
 * test/multi-instance/dcb-race.e2e-spec.ts run it. Keep the three in step.
 */

/** A POST of the tenant's API (the API key already bound): status and parsed JSON body. */
export type Api = (path: string, body: unknown) => Promise<{ status: number; body: any }>;

export interface QueryItem {
  types?: string[];
  tags?: string[];
}

/** Every event matching `items`, oldest first, and the position to put in the condition's `after`. */
export async function readAll(api: Api, items: QueryItem[]): Promise<{ events: any[]; position: number }> {
  const events: any[] = [];
  let afterPosition = 0;
  for (;;) {
    const res = await api('/events/query', { items, afterPosition, limit: 1000 });
    if (res.status !== 200) throw new Error(`POST /events/query: ${res.status} ${JSON.stringify(res.body)}`);
    events.push(...res.body.events);
    // nextAfterPosition: the last event's position, or the afterPosition sent when none matched.
    afterPosition = res.body.nextAfterPosition;
    if (res.body.events.length < 1000) return { events, position: afterPosition };
  }
}

/** Appends `body`; true when stored, false on a failed condition (re-read and decide again); throws on anything else. */
async function appendOrConflict(api: Api, path: string, body: unknown): Promise<{ stored: boolean; answer: any }> {
  const res = await api(path, body);
  if (res.status === 201) return { stored: true, answer: res.body };
  if (res.status === 409 && res.body?.error === 'APPEND_CONDITION_FAILED') return { stored: false, answer: res.body };
  throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** How often a client re-reads and tries again before giving up (a bound, not an expectation). */
export const MAX_ATTEMPTS = 100;

export interface Outcome<T extends string> {
  outcome: T;
  /** Appends sent: 1 + the conflicts retried. */
  appends: number;
  /** `409 APPEND_CONDITION_FAILED` answers received. */
  conflicts: number;
}

// ---- 1. Course subscriptions: a course takes at most 30 students, a student at most 5 courses. ----

export const COURSE_CAPACITY = 30;
export const STUDENT_COURSE_LIMIT = 5;

export async function subscribe(
  api: Api,
  courseId: string,
  studentId: string,
): Promise<Outcome<'subscribed' | 'already-subscribed' | 'course-full' | 'student-limit'>> {
  const course = `course:${courseId}`;
  const student = `student:${studentId}`;
  // Two items, OR-ed: the course's subscriptions and the student's.
  const items = [
    { types: ['StudentSubscribedToCourse'], tags: [course] },
    { types: ['StudentSubscribedToCourse'], tags: [student] },
  ];
  let appends = 0;
  let conflicts = 0;
  while (appends < MAX_ATTEMPTS) {
    const { events, position } = await readAll(api, items);
    const ofCourse = events.filter((e) => e.tags.includes(course));
    const ofStudent = events.filter((e) => e.tags.includes(student));
    if (ofCourse.some((e) => e.tags.includes(student))) return { outcome: 'already-subscribed', appends, conflicts };
    if (ofCourse.length >= COURSE_CAPACITY) return { outcome: 'course-full', appends, conflicts };
    if (ofStudent.length >= STUDENT_COURSE_LIMIT) return { outcome: 'student-limit', appends, conflicts };
    appends++;
    const { stored } = await appendOrConflict(api, '/events', {
      aggregateId: `subscription-${courseId}-${studentId}`,
      eventType: 'StudentSubscribedToCourse',
      data: { courseId, studentId },
      tags: [course, student],
      // Fails if a subscription to this course, or of this student, was stored after what we read.
      condition: { failIfEventsMatch: { items }, after: position },
    });
    if (stored) return { outcome: 'subscribed', appends, conflicts };
    conflicts++;
  }
  throw new Error(`subscribe ${studentId} to ${courseId}: still conflicting after ${MAX_ATTEMPTS} appends`);
}

// ---- 2. Unique usernames: a name is held by at most one user; a rename releases the old one. ----

const USERNAME_EVENTS = ['UserRegistered', 'UsernameChanged'];

/** Whether `e` (an event tagged `username:<name>`) leaves `name` held: a registration or a rename *to* it. */
const claims = (e: any, name: string): boolean =>
  e.eventType === 'UserRegistered' ? e.data.username === name : e.data.newUsername === name;

export async function register(api: Api, userId: string, username: string): Promise<Outcome<'registered' | 'taken'>> {
  const items = [{ types: USERNAME_EVENTS, tags: [`username:${username}`] }];
  let appends = 0;
  let conflicts = 0;
  while (appends < MAX_ATTEMPTS) {
    const { events, position } = await readAll(api, items);
    const last = events.at(-1);
    if (last && claims(last, username)) return { outcome: 'taken', appends, conflicts };
    appends++;
    const { stored } = await appendOrConflict(api, '/events', {
      aggregateId: `user-${userId}`,
      eventType: 'UserRegistered',
      data: { userId, username },
      tags: [`user:${userId}`, `username:${username}`],
      expectedVersion: 0,
      // Never used: fail if any event names it at all (no `after`). Released earlier: fail if one came after the release.
      condition: { failIfEventsMatch: { items }, ...(last ? { after: position } : {}) },
    });
    if (stored) return { outcome: 'registered', appends, conflicts };
    conflicts++;
  }
  throw new Error(`register ${username}: still conflicting after ${MAX_ATTEMPTS} appends`);
}

export async function rename(api: Api, userId: string, newUsername: string): Promise<Outcome<'renamed' | 'taken'>> {
  // The new name's history and the user's own (its current name): one read, one position.
  const items = [
    { types: USERNAME_EVENTS, tags: [`username:${newUsername}`] },
    { types: USERNAME_EVENTS, tags: [`user:${userId}`] },
  ];
  let appends = 0;
  let conflicts = 0;
  while (appends < MAX_ATTEMPTS) {
    const { events, position } = await readAll(api, items);
    const mine = events.filter((e) => e.tags.includes(`user:${userId}`));
    const current = mine.length ? (mine.at(-1).data.newUsername ?? mine.at(-1).data.username) : undefined;
    if (current === undefined) throw new Error(`no user ${userId}`);
    const lastOfName = events.filter((e) => e.tags.includes(`username:${newUsername}`)).at(-1);
    if (lastOfName && claims(lastOfName, newUsername)) return { outcome: 'taken', appends, conflicts };
    appends++;
    const { stored } = await appendOrConflict(api, '/events', {
      aggregateId: `user-${userId}`,
      eventType: 'UsernameChanged',
      data: { userId, oldUsername: current, newUsername },
      // Tagged with both names: the last event of `username:<old>` is now this one, which releases it.
      tags: [`user:${userId}`, `username:${current}`, `username:${newUsername}`],
      condition: { failIfEventsMatch: { items }, after: position },
    });
    if (stored) return { outcome: 'renamed', appends, conflicts };
    conflicts++;
  }
  throw new Error(`rename ${userId} to ${newUsername}: still conflicting after ${MAX_ATTEMPTS} appends`);
}

// ---- 3. Gap-free invoice numbers per tenant: the next is the last InvoiceNumbered's + 1. ----

export async function numberInvoice(api: Api, invoiceId: string): Promise<Outcome<'numbered'> & { number: number }> {
  const items = [{ types: ['InvoiceNumbered'] }];
  let appends = 0;
  let conflicts = 0;
  while (appends < MAX_ATTEMPTS) {
    // Only the last one counts: read backward, one event.
    const res = await api('/events/query', { items, direction: 'backward', limit: 1 });
    if (res.status !== 200) throw new Error(`POST /events/query: ${res.status} ${JSON.stringify(res.body)}`);
    const last = res.body.events[0];
    const number = last ? last.data.number + 1 : 1;
    appends++;
    const { stored } = await appendOrConflict(api, '/events', {
      aggregateId: `invoice-${invoiceId}`,
      eventType: 'InvoiceNumbered',
      data: { invoiceId, number },
      tags: [`invoice:${invoiceId}`],
      expectedVersion: 0,
      // Fails if any invoice was numbered after the one we read (the first one: if any was at all).
      condition: { failIfEventsMatch: { items }, ...(last ? { after: last.position } : {}) },
    });
    if (stored) return { outcome: 'numbered', number, appends, conflicts };
    conflicts++;
  }
  throw new Error(`number invoice ${invoiceId}: still conflicting after ${MAX_ATTEMPTS} appends`);
}
