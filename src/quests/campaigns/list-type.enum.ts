import { registerEnumType } from '@nestjs/graphql';

/** Galxe's `ListType`: the order of a campaign list. */
export enum ListType {
  Newest = 'Newest',
  Earliest = 'Earliest',
  Trending = 'Trending',
}

registerEnumType(ListType, {
  name: 'ListType',
  valuesMap: {
    Newest: { description: 'Latest start time first; quests without one last (the default)' },
    Earliest: { description: 'Earliest start time first; quests without one last' },
    Trending: { description: 'Refused: nothing here measures trends' },
  },
});
