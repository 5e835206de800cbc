import { Field, ObjectType } from '@nestjs/graphql';
import { ExtensionField } from '../../common/graphql/extension-field.decorator';

@ObjectType('PageInfo')
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, {
    nullable: true,
    description: 'Cursor of the last entry; pass as cursorAfter',
  })
  endCursor!: string | null;

  @ExtensionField()
  @Field(() => Boolean)
  hasPreviousPage!: boolean;

  @ExtensionField()
  @Field(() => String, {
    nullable: true,
    description: 'Cursor of the first entry; pass as cursorBefore',
  })
  startCursor!: string | null;
}
