import { seededRandom } from '../common/seeded-random';
import { QuestStatus } from '../records/quest-status.enum';

export interface DemoOptions {
  /** Addresses with points per space. */
  entriesPerSpace: number;
  seed?: number;
  /** The demo's "now": sprints and events are laid out in the six weeks before it. */
  now?: number;
}

const DAY = 86_400_000;
const SPACES = [
  { id: 1, name: 'Aurora Guild', description: 'Builders and testers of the Aurora network' },
  { id: 2, name: 'Nebula DAO', description: 'Governance and community quests of Nebula' },
  { id: 3, name: 'Solstice Arcade', description: null },
];
const QUESTS = [
  { suffix: 'follow', name: 'Follow us on X', status: QuestStatus.Active, questType: 'social' },
  {
    suffix: 'bridge',
    name: 'Bridge your first asset',
    status: QuestStatus.Active,
    questType: 'onchain',
  },
  { suffix: 'launch', name: 'Launch week quiz', status: QuestStatus.Expired, questType: 'quiz' },
  {
    suffix: 'early',
    name: 'Early supporter',
    status: QuestStatus.CapReached,
    questType: 'onchain',
  },
  {
    suffix: 'next',
    name: 'Season two preview',
    status: QuestStatus.NotStarted,
    questType: 'social',
  },
];
const NAMES = [
  'nova',
  'orbit',
  'quark',
  'pixel',
  'ember',
  'drift',
  'lumen',
  'atlas',
  'cinder',
  'vega',
];

function iso(millis: number): string {
  return new Date(millis).toISOString();
}

/**
 * Demo records: three spaces, each with three two-week sprints, five quests and
 * `entriesPerSpace` addresses. Points come in multiples of 5 and events on whole hours, so boards
 * have many ties on points and some on time as well. A few deductions are included.
 */
export function* demoRecords(options: DemoOptions): Generator<Record<string, unknown>> {
  const rand = seededRandom(options.seed ?? 42);
  const now = Math.floor((options.now ?? Date.now()) / 3_600_000) * 3_600_000;
  const start = now - 42 * DAY;
  for (const space of SPACES) {
    yield { type: 'space', ...space };
    for (let s = 0; s < 3; s++) {
      yield {
        type: 'sprint',
        id: space.id * 100 + s + 1,
        spaceId: space.id,
        name: `Sprint ${s + 1}`,
        startTime: iso(start + s * 14 * DAY),
        endTime: iso(start + (s + 1) * 14 * DAY),
      };
    }
    for (const quest of QUESTS) {
      yield {
        type: 'quest',
        id: `${space.id}-${quest.suffix}`,
        spaceId: space.id,
        name: quest.name,
        status: quest.status,
        questType: quest.questType,
        startTime: iso(start),
        endTime: iso(now + 14 * DAY),
        cap: quest.status === QuestStatus.CapReached ? 500 : null,
      };
    }
    let eventNumber = 0;
    for (let i = 0; i < options.entriesPerSpace; i++) {
      let body = '';
      while (body.length < 40)
        body += Math.floor(rand() * 2 ** 32)
          .toString(16)
          .padStart(8, '0');
      const address = `0x${i % 7 === 0 ? body.toUpperCase() : body}`;
      if (rand() < 0.7) {
        yield {
          type: 'profile',
          address,
          username: `${NAMES[i % NAMES.length]}_${space.id}_${i}`,
          avatar: rand() < 0.8 ? `https://avatars.loyalty.example/${body.slice(0, 12)}.png` : null,
        };
      }
      const events = 1 + Math.floor(rand() * 4);
      for (let e = 0; e < events; e++) {
        const hour = Math.floor(rand() * 42 * 24);
        yield {
          type: 'points',
          key: `demo-${space.id}-${eventNumber++}`,
          spaceId: space.id,
          address,
          points: 5 * (1 + Math.floor(rand() * 40)),
          occurredAt: iso(start + hour * 3_600_000),
        };
      }
      if (rand() < 0.05) {
        yield {
          type: 'points',
          key: `demo-${space.id}-${eventNumber++}`,
          spaceId: space.id,
          address,
          points: -25,
          occurredAt: iso(now - DAY),
        };
      }
      for (const quest of QUESTS.slice(0, 4)) {
        if (rand() < 0.3)
          yield { type: 'participation', questId: `${space.id}-${quest.suffix}`, address };
      }
    }
  }
}
