import { Field, Int, ObjectType } from '@nestjs/graphql';

@ObjectType('Sprint')
export class Sprint {
  @Field(() => Int)
  id!: number;

  @Field(() => String)
  name!: string;

  @Field(() => String, {
    description: 'ISO 8601; a points event counts when startTime <= occurredAt',
  })
  startTime!: string;

  @Field(() => String, { description: 'ISO 8601; a points event counts when occurredAt < endTime' })
  endTime!: string;
}
