import { Field, ObjectType } from '@nestjs/graphql';

@ObjectType('Space')
export class Space {
  /** docs/api.md (Schema) types the output id as String! while `space(id:)` takes an Int!. */
  @Field(() => String, { description: 'Unique identifier of the space' })
  id!: string;

  @Field(() => String, { description: 'Display name' })
  name!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  /** Numeric id for the field resolvers; not part of the schema. */
  spaceId!: number;
}
