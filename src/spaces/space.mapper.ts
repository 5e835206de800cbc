import type { SpaceEntity } from './space.entity';
import { Space } from './space.model';
import type { SprintEntity } from './sprint.entity';
import { Sprint } from './sprint.model';

export function toSpace(entity: SpaceEntity): Space {
  return Object.assign(new Space(), {
    id: String(entity.id),
    name: entity.name,
    description: entity.description,
    alias: entity.alias,
    spaceId: entity.id,
  });
}

export function toSprint(entity: SprintEntity): Sprint {
  return Object.assign(new Sprint(), {
    id: entity.id,
    name: entity.name,
    startTime: new Date(entity.startTime).toISOString(),
    endTime: new Date(entity.endTime).toISOString(),
  });
}
