import type { QuestEntity } from './quest.entity';
import { Quest } from './quest.model';

const iso = (millis: number | null): string | null =>
  millis === null ? null : new Date(millis).toISOString();

export function toQuest(entity: QuestEntity): Quest {
  return Object.assign(new Quest(), {
    id: entity.id,
    name: entity.name,
    status: entity.status,
    participantsCount: entity.participantsCount,
    type: entity.type,
    startTime: iso(entity.startTime),
    endTime: iso(entity.endTime),
    cap: entity.cap,
  });
}
