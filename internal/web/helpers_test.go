package web

import (
	"net/url"

	"github.com/causalctl/causalctl/internal/record"
)

func pathEscape(s string) string          { return url.PathEscape(s) }
func urlParse(s string) (*url.URL, error) { return url.Parse(s) }
func recordTxn(id string) record.OpenTransaction {
	return record.OpenTransaction{ProducerID: 7, ProducerEpoch: 1, TransactionalID: id, FirstOffset: 40}
}
