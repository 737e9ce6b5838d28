INSERT INTO {{.Table}} (seq, owner)
SETTINGS insert_deduplicate = 1, insert_deduplication_token = '{{.Token}}'
VALUES ({seq:UInt64}, {owner:String})
