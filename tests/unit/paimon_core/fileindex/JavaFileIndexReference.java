// Java's own code for the data-file index of numeric columns, copied from Apache Paimon
// (paimon-common: FileIndexFormat.Writer, BloomFilter64, FastHash.getLongHash, FileIndexOptions
// .setupOptions; paimon-core: DataFileIndexWriter.serializeMaintainers) with only JDK classes, so
// tests/unit/paimon_core/fileindex/test_file_index_bytes.py can compare our bytes with what the
// JVM (HashMap order, DataOutputStream.writeUTF, int/long arithmetic) produces.
//
// stdin:  OPT <key>\t<value>          table options, in the order they were put
//         COL <name>\t<TYPE>\t<v1,v2,...>   a column's values (TYPE: TINYINT SMALLINT INT BIGINT
//                                          FLOAT DOUBLE DATE; "null" for a null)
// stdout: the hex of the index container DataFileIndexWriter.close() would write.

import java.io.*;
import java.util.*;

public class JavaFileIndexReference {

    static final long MAGIC = 1493475289347502L;

    static long getLongHash(long key) {
        key = (~key) + (key << 21);
        key = key ^ (key >> 24);
        key = (key + (key << 3)) + (key << 8);
        key = key ^ (key >> 14);
        key = (key + (key << 2)) + (key << 4);
        key = key ^ (key >> 28);
        key = key + (key << 31);
        return key;
    }

    static final class BloomFilter64 {
        final byte[] data;
        final int numBits;
        final int numHashFunctions;

        BloomFilter64(long items, double fpp) {
            int nb = (int) (-items * Math.log(fpp) / (Math.log(2) * Math.log(2)));
            this.numBits = nb + (Byte.SIZE - (nb % Byte.SIZE));
            this.numHashFunctions = Math.max(1, (int) Math.round((double) numBits / items * Math.log(2)));
            this.data = new byte[numBits / Byte.SIZE];
        }

        void addHash(long hash64) {
            int hash1 = (int) hash64;
            int hash2 = (int) (hash64 >>> 32);
            for (int i = 1; i <= numHashFunctions; i++) {
                int combinedHash = hash1 + (i * hash2);
                if (combinedHash < 0) {
                    combinedHash = ~combinedHash;
                }
                int pos = combinedHash % numBits;
                data[(pos >>> 3)] |= (byte) ((byte) 1 << (pos & 0x07));
            }
        }

        byte[] serialized() {
            byte[] out = new byte[data.length + 4];
            out[0] = (byte) ((numHashFunctions >>> 24) & 0xFF);
            out[1] = (byte) ((numHashFunctions >>> 16) & 0xFF);
            out[2] = (byte) ((numHashFunctions >>> 8) & 0xFF);
            out[3] = (byte) (numHashFunctions & 0xFF);
            System.arraycopy(data, 0, out, 4, data.length);
            return out;
        }
    }

    static long hashOf(String type, String v) {
        switch (type) {
            case "FLOAT":
                return getLongHash(Float.floatToIntBits(Float.parseFloat(v)));
            case "DOUBLE":
                return getLongHash(Double.doubleToLongBits(Double.parseDouble(v)));
            default: // TINYINT SMALLINT INT BIGINT DATE: the value as a long
                return getLongHash(Long.parseLong(v));
        }
    }

    // FileIndexOptions.Column
    static final class Column {
        final String name;
        Column(String name) { this.name = name; }
        @Override public int hashCode() { return Arrays.hashCode(new Object[] {name, null, false}); }
        @Override public boolean equals(Object o) { return o instanceof Column && ((Column) o).name.equals(name); }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        HashMap<String, String> options = new HashMap<>();
        Map<String, String[]> columns = new HashMap<>();
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith("OPT ")) {
                String[] kv = line.substring(4).split("\t", 2);
                options.put(kv[0], kv[1]);
            } else if (line.startsWith("COL ")) {
                String[] p = line.substring(4).split("\t", 3);
                columns.put(p[0], p);
            }
        }
        // FileIndexOptions.setupOptions (top-level columns only)
        Map<Column, Map<String, Map<String, String>>> indexTypeOptions = new HashMap<>();
        Map<String, String> optionMap = new HashMap<>();
        for (Map.Entry<String, String> e : options.entrySet()) {
            String key = e.getKey();
            if (key.startsWith("file-index.")) {
                if (key.endsWith(".columns")) {
                    String indexType = key.substring("file-index.".length(), key.length() - ".columns".length());
                    for (String name : e.getValue().split(",")) {
                        indexTypeOptions.computeIfAbsent(new Column(name.trim()), c -> new HashMap<>())
                                .computeIfAbsent(indexType, i -> new HashMap<>());
                    }
                } else {
                    optionMap.put(key, e.getValue());
                }
            }
        }
        for (Map.Entry<String, String> e : optionMap.entrySet()) {
            String[] kv = e.getKey().substring("file-index.".length()).split("\\.");
            if (kv.length != 3) continue;
            Map<String, Map<String, String>> types = indexTypeOptions.get(new Column(kv[1]));
            if (types != null && types.get(kv[0]) != null) types.get(kv[0]).put(kv[2], e.getValue());
        }
        // DataFileIndexWriter: index type -> column -> maintainer (bloom filters only)
        Map<String, Map<String, BloomFilter64>> indexMaintainers = new HashMap<>();
        for (Map.Entry<Column, Map<String, Map<String, String>>> entry : indexTypeOptions.entrySet()) {
            String columnName = entry.getKey().name;
            String[] col = columns.get(columnName);
            for (Map.Entry<String, Map<String, String>> typeEntry : entry.getValue().entrySet()) {
                Map<String, BloomFilter64> byColumn =
                        indexMaintainers.computeIfAbsent(typeEntry.getKey(), k -> new HashMap<>());
                if (byColumn.get(columnName) == null) {
                    Map<String, String> o = typeEntry.getValue();
                    long items = Long.parseLong(o.getOrDefault("items", "1000000"));
                    double fpp = Double.parseDouble(o.getOrDefault("fpp", "0.1"));
                    BloomFilter64 filter = new BloomFilter64(items, fpp);
                    for (String v : col[2].split(",")) {
                        if (!v.equals("null")) filter.addHash(hashOf(col[1], v));
                    }
                    byColumn.put(columnName, filter);
                }
            }
        }
        Map<String, Map<String, byte[]>> indexMaps = new HashMap<>(); // serializeMaintainers
        for (Map.Entry<String, Map<String, BloomFilter64>> byType : indexMaintainers.entrySet()) {
            for (Map.Entry<String, BloomFilter64> m : byType.getValue().entrySet()) {
                indexMaps.computeIfAbsent(m.getKey(), k -> new HashMap<>()).put(byType.getKey(), m.getValue().serialized());
            }
        }
        // FileIndexFormat.Writer.writeColumnIndexes
        Map<String, Map<String, int[]>> bodyInfo = new LinkedHashMap<>();
        ByteArrayOutputStream baos = new ByteArrayOutputStream(256);
        for (Map.Entry<String, Map<String, byte[]>> columnMap : indexMaps.entrySet()) {
            Map<String, int[]> innerMap = bodyInfo.computeIfAbsent(columnMap.getKey(), k -> new LinkedHashMap<>());
            for (Map.Entry<String, byte[]> entry : columnMap.getValue().entrySet()) {
                int start = baos.size();
                baos.write(entry.getValue());
                innerMap.put(entry.getKey(), new int[] {start, baos.size() - start});
            }
        }
        byte[] body = baos.toByteArray();
        int headLength = 8 + 4 + 4 + 4 + bodyInfo.values().stream().mapToInt(Map::size).sum() * 8 + bodyInfo.size() * 4 + 4;
        ByteArrayOutputStream names = new ByteArrayOutputStream();
        DataOutputStream nameOut = new DataOutputStream(names);
        for (Map.Entry<String, Map<String, int[]>> e : bodyInfo.entrySet()) {
            nameOut.writeUTF(e.getKey());
            for (String s : e.getValue().keySet()) nameOut.writeUTF(s);
        }
        headLength += names.size();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        DataOutputStream dos = new DataOutputStream(out);
        dos.writeLong(MAGIC);
        dos.writeInt(1);
        dos.writeInt(headLength);
        dos.writeInt(bodyInfo.size());
        for (Map.Entry<String, Map<String, int[]>> e : bodyInfo.entrySet()) {
            dos.writeUTF(e.getKey());
            dos.writeInt(e.getValue().size());
            for (Map.Entry<String, int[]> ie : e.getValue().entrySet()) {
                dos.writeUTF(ie.getKey());
                dos.writeInt(ie.getValue()[0] + headLength);
                dos.writeInt(ie.getValue()[1]);
            }
        }
        dos.writeInt(0);
        dos.write(body);
        StringBuilder hex = new StringBuilder();
        for (byte b : out.toByteArray()) hex.append(String.format("%02x", b));
        System.out.println(hex);
    }
}
