import { registerEnumType } from '@nestjs/graphql';

/**
 * Galxe's `order` of `loyaltyPointsRanks`, with the values its docs give ("you can choose Points
 * or GalxeID"). Only Points has a truthful meaning here: see docs/galxe-compatibility.md.
 */
export enum LoyaltyPointsRankOrder {
  Points = 'Points',
  GalxeID = 'GalxeID',
}

registerEnumType(LoyaltyPointsRankOrder, {
  name: 'LoyaltyPointsRankOrder',
  valuesMap: {
    Points: { description: 'By points, highest first: the order of the board' },
    GalxeID: { description: 'Refused: this service keeps no Galxe IDs' },
  },
});
