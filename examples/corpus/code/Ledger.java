public class Ledger {
    private int turn;

    public int beginTurn() {
        return turn++;
    }

    public boolean cooled(int servedAt, int dedupTurns) {
        return turn - servedAt < dedupTurns;
    }
}
