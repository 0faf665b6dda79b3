// The order in which Java's BitmapFileIndex.Writer visits its values (id2bitmap, a HashMap filled
// by computeIfAbsent in row order), for tests/unit/paimon_core/fileindex/test_file_index_bytes.py.
// Keys are the JDK's boxed types, hashed by the JDK; a string is a stand-in for Paimon's
// BinaryString whose hashCode is MurmurHashUtils.hashBytes (copied: seed 42, 4-byte words in the
// machine's byte order, then each remaining byte).
//
// stdin: one line per column: <TYPE>\t<v1,v2,...> (TYPE: TINYINT SMALLINT INT BIGINT FLOAT DOUBLE
// BOOLEAN STRING; "null" skipped; STRING values hex-encoded UTF-8). stdout: the keys in iteration
// order, one line per column (strings hex, floats as their IEEE bits).

import java.io.*;
import java.nio.*;
import java.util.*;

public class JavaBitmapKeyOrder {

    static final class BinaryString {
        final byte[] bytes;
        BinaryString(byte[] b) { bytes = b; }
        @Override public boolean equals(Object o) { return o instanceof BinaryString && Arrays.equals(bytes, ((BinaryString) o).bytes); }
        @Override public int hashCode() {
            ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder());
            int length = bytes.length, aligned = length - length % 4, h1 = 42;
            for (int i = 0; i < aligned; i += 4) h1 = mixH1(h1, mixK1(buf.getInt(i)));
            for (int i = aligned; i < length; i++) h1 = mixH1(h1, mixK1(bytes[i]));
            h1 ^= length;
            h1 ^= h1 >>> 16; h1 *= 0x85ebca6b; h1 ^= h1 >>> 13; h1 *= 0xc2b2ae35; h1 ^= h1 >>> 16;
            return h1;
        }
        static int mixK1(int k1) { k1 *= 0xcc9e2d51; k1 = Integer.rotateLeft(k1, 15); k1 *= 0x1b873593; return k1; }
        static int mixH1(int h1, int k1) { h1 ^= k1; h1 = Integer.rotateLeft(h1, 13); return h1 * 5 + 0xe6546b64; }
        @Override public String toString() { StringBuilder s = new StringBuilder(); for (byte b : bytes) s.append(String.format("%02x", b)); return s.toString(); }
    }

    static Object key(String type, String v) {
        switch (type) {
            case "TINYINT": return Byte.parseByte(v);
            case "SMALLINT": return Short.parseShort(v);
            case "INT": return Integer.parseInt(v);
            case "BIGINT": return Long.parseLong(v);
            case "FLOAT": return Float.intBitsToFloat((int) Long.parseLong(v));
            case "DOUBLE": return Double.longBitsToDouble(Long.parseLong(v));
            case "BOOLEAN": return Boolean.parseBoolean(v);
            default: {
                byte[] b = new byte[v.length() / 2];
                for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(v.substring(2 * i, 2 * i + 2), 16);
                return new BinaryString(b);
            }
        }
    }

    static String show(Object k) {
        if (k instanceof Float) return Integer.toString(Float.floatToIntBits((Float) k));
        if (k instanceof Double) return Long.toString(Double.doubleToLongBits((Double) k));
        return k.toString();
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        for (String line; (line = in.readLine()) != null; ) {
            String[] p = line.split("\t", 2);
            Map<Object, List<Integer>> id2bitmap = new HashMap<>();
            int row = 0;
            for (String v : p[1].split(",")) {
                if (!v.equals("null")) id2bitmap.computeIfAbsent(key(p[0], v), k -> new ArrayList<>()).add(row);
                row++;
            }
            StringJoiner out = new StringJoiner(",");
            for (Object k : id2bitmap.keySet()) out.add(show(k));
            System.out.println(out);
        }
    }
}
