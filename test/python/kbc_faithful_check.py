"""
Faithfulness check of issue 26: drives an emulator started with no special settings with the official Python client
(kbcstorage) through its token, bucket, metadata, export, file and configuration calls, and prints one JSON document
with what it saw. Run by test/integration/emulator/python-client.test.ts.

Usage: python kbc_faithful_check.py <storage_url> <token> <work_dir>
"""
import gzip
import json
import os
import sys

from kbcstorage.client import Client


def main():
    url, token, work = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(work, exist_ok=True)
    os.chdir(work)  # the client downloads slices into the current directory
    client = Client(url, token)
    out = {}

    verified = client.tokens.verify()
    out["token"] = {k: verified[k] for k in ("id", "description", "isMasterToken")}
    out["owner"] = {k: verified["owner"][k] for k in ("id", "defaultBackend", "fileStorageProvider")}

    bucket = client.buckets.create("faithful", stage="in", description="Test bucket")
    detail = client.buckets.detail(bucket["id"])
    out["emptyBucket"] = {k: detail[k] for k in ("id", "name", "description", "tables", "attributes", "backend")}

    path = os.path.join(work, "people.csv")
    with open(path, "w", newline="") as f:
        f.write('id,name\n1,Ann\n2,"Bob, Jr."\n')
    table_id = client.tables.create(bucket["id"], "people", path, primary_key=["id"])
    detail = client.buckets.detail(bucket["id"])
    out["bucketTables"] = [{k: t[k] for k in ("id", "name", "rowsCount")} for t in detail["tables"]]
    out["listedTables"] = [t["id"] for t in client.buckets.list_tables(bucket["id"])]

    out["metadata"] = client.tables.metadata.create(
        table_id=table_id,
        provider="test",
        metadata=[{"key": "test_table_with_metadata", "value": "success"}],
        columns_metadata=[[{"key": "test_column_with_metadata", "value": "success", "columnName": "name"}]],
    )
    table = client.tables.detail(table_id)
    out["columnMetadata"] = {c: [(m["key"], m["value"], m["provider"]) for m in ms] for c, ms in table["columnMetadata"].items()}

    exported = client.tables.export_to_file(table_id, work)
    with open(exported, newline="") as f:
        out["exportedCsv"] = f.read()
    export_file = client.files.list(tags=["table-export"], limit=1)[0]
    out["exportFile"] = {k: export_file[k] for k in ("isSliced", "region", "provider")}
    raw = client.files.download(export_file["id"], os.path.join(work, "raw"))
    with open(raw, "rb") as f:
        data = f.read()
    out["downloadedGzipped"] = data[:2] == b"\x1f\x8b"  # export_to_file asks for a gzipped export
    out["downloadedExport"] = (gzip.decompress(data) if out["downloadedGzipped"] else data).decode()

    config = client.configurations.create("keboola.ex-db-mysql", "My config", configuration={"parameters": {"db": "x"}}, change_description="Initial")
    out["config"] = {k: config[k] for k in ("name", "version", "changeDescription", "configuration", "isDeleted")}
    out["configList"] = [c["id"] for c in client.configurations.list("keboola.ex-db-mysql")]
    out["configDetail"] = client.configurations.detail("keboola.ex-db-mysql", config["id"])["configuration"]
    out["components"] = [c["id"] for c in client.components.list()]
    client.configurations.delete("keboola.ex-db-mysql", config["id"])
    out["configListAfterDelete"] = [c["id"] for c in client.configurations.list("keboola.ex-db-mysql")]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
